-- BaseTen's relationship page (seeds/000_c88b41cc688eb58d.txt), first example plus the
-- seed's ALTER TABLE, verbatim, so the file stands on its own.
-- Expected: email.person and person.email, both to-one (one-to-one).

CREATE TABLE person (
        id SERIAL PRIMARY KEY,
        firstname VARCHAR (255),
        surname VARCHAR (255)
);

CREATE TABLE email (
        id SERIAL PRIMARY KEY,
        address VARCHAR (255),
        person_id INTEGER CONSTRAINT person REFERENCES person (id)
);

ALTER TABLE email ADD UNIQUE (person_id);
