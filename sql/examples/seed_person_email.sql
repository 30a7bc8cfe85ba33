-- BaseTen's relationship page (seeds/000_c88b41cc688eb58d.txt), first example, verbatim.
-- Expected: email.person (to-one, the constraint's name) and person.email (to-many).

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
