-- Identifiers that are not Swift names, for the typed-model generator (issue 23): keywords,
-- spaces, dashes, leading digits, non-ASCII, names that camel-case to one, names the
-- generated code uses itself; an enum, a domain, arrays and types without a Swift mapping.

CREATE TYPE mood AS ENUM ('happy', 'sad', 'so-so');
CREATE DOMAIN positive AS int4 CHECK (VALUE > 0);

CREATE TABLE "Order Line" (
        id serial PRIMARY KEY,
        "default" text,
        "class" text,
        "type" text,
        "first name" text,
        "first-name" text,
        "firstName" text,
        "2fa" bool NOT NULL DEFAULT false,
        "größe" numeric,
        "object" uuid,
        "values" int4[],
        feeling mood,
        qty positive,
        at timestamptz,
        raw bytea,
        doc jsonb,
        span interval,
        "let" text
);

-- A table named like the generated `Values` type, with columns named `self` and `Self`.
CREATE TABLE "Values" (id int PRIMARY KEY, line_id int REFERENCES "Order Line", "self" text, "Self" text);

-- A leading digit and a dash; a to-one named `Values` (from `Values_id`).
CREATE TABLE "2024-sales" (id int PRIMARY KEY, "Values_id" int REFERENCES "Values");

-- A keyword as a table name, a many-to-many through class_tag.
CREATE TABLE "class" (id int PRIMARY KEY, "person" int, "prefix" text);
CREATE TABLE class_tag (class_id int REFERENCES "class", tag_id int REFERENCES "Values", PRIMARY KEY (class_id, tag_id));

-- Two tables whose names camel-case to one; a column `setOwner` beside the to-one `owner`.
CREATE TABLE person_title (id int PRIMARY KEY);
CREATE TABLE "personTitle" (id int PRIMARY KEY, owner_id int REFERENCES person_title, "setOwner" text);

-- Composite types with spaces in their names and fields, one nested in the other (and an
-- array of it); a jsonb column the generator gives a Codable type (relate-generate.json).
CREATE TYPE "postal address" AS ("street name" text, "zip code" int4, lat numeric, since date);
CREATE TYPE "contact card" AS (label varchar(40), home "postal address", "old homes" "postal address"[], score float8);
CREATE TABLE "mail box" (id int PRIMARY KEY, card "contact card", homes "postal address"[], prefs jsonb);
