-- BaseTen's relationship page (seeds/000_c88b41cc688eb58d.txt), many-to-many example,
-- verbatim.
-- Expected: person.title and title.person (many-to-many through person_title_rel), and
-- the helper's own rows: person.person_title_rel, title.person_title_rel (to-many),
-- person_title_rel.person, person_title_rel.title (to-one).

CREATE TABLE person (
        id SERIAL PRIMARY KEY,
        firstname VARCHAR (255),
        surname VARCHAR (255)
);

CREATE TABLE title (
        id SERIAL PRIMARY KEY,
        name VARCHAR (255)
);

CREATE TABLE person_title_rel (
        person_id INTEGER REFERENCES person (id),
        title_id INTEGER REFERENCES title (id),
        PRIMARY KEY (person_id, title_id)
);
