-- Hard cases for relationship inference (DESIGN.md, "Relationship inference" and "Keys").
--
-- Load into an empty schema that comes first in search_path:
--   PGOPTIONS='-c search_path=s1' psql "$URL" -v ON_ERROR_STOP=1 \
--       -v other_schema=s1_other -f sql/examples/hard_cases.sql
-- Every name is unqualified, except the one extra schema that the cross-schema case needs;
-- its name comes from the psql variable other_schema (default hard_cases_other), so that
-- parallel loads into different schemas do not collide.
-- sql/examples/README.md lists the relationships a reader should expect.

\if :{?other_schema} \else \set other_schema hard_cases_other \endif

-- Composite primary key, and a composite FK referencing it.
-- Expect: shelf.warehouse (to-one; composite FK, so named after the target table; also the
-- constraint's generated name shelf_region_warehouse_code_fkey) and warehouse.shelf
-- (to-many), joined on (region, warehouse_code) = (region, code). ON DELETE CASCADE.
CREATE TABLE warehouse (
    region text NOT NULL,
    code   text NOT NULL,
    name   text NOT NULL,
    PRIMARY KEY (region, code)
);

CREATE TABLE shelf (
    id             serial PRIMARY KEY,
    region         text NOT NULL,
    warehouse_code text NOT NULL,
    label          text,
    FOREIGN KEY (region, warehouse_code) REFERENCES warehouse (region, code) ON DELETE CASCADE
);

-- Self-reference. Expect: employee.manager (to-one, from manager_id) and employee.employee
-- (to-many: the people who report to this one). ON DELETE SET NULL.
CREATE TABLE employee (
    id         serial PRIMARY KEY,
    name       text NOT NULL,
    manager_id integer REFERENCES employee (id) ON DELETE SET NULL
);

-- Three FKs in one table: never a many-to-many helper, under any rule, even though its
-- primary key is exactly the three FK columns. Expect only one-to-many:
-- employee.assignment, project.assignment, role.assignment, and the to-ones
-- assignment.employee, assignment.project, assignment.role.
CREATE TABLE project (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE role (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE assignment (
    employee_id integer NOT NULL REFERENCES employee (id) ON DELETE CASCADE,
    project_id  integer NOT NULL REFERENCES project (id) ON DELETE CASCADE,
    role_id     integer NOT NULL REFERENCES role (id),
    PRIMARY KEY (employee_id, project_id, role_id)
);

-- Two FKs from one table to the same table (GRDB's example, seed 002).
-- Expect: book.author and book.translator (to-one, from "authorId" / "translatorId"), and
-- on person two to-manys that would both be called book: person.book_by_authorId and
-- person.book_by_translatorId; the bare person.book is ambiguous (an error listing both).
-- "authorId" is ON DELETE RESTRICT, "translatorId" ON DELETE SET NULL.
-- Under .anyTwoForeignKeys, book has exactly two FKs, so it is also a self many-to-many
-- helper person <-> person; under .keyed (default) and .strict it is not, because
-- ("authorId", "translatorId") is not a unique key of book.
CREATE TABLE person (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE book (
    id             serial PRIMARY KEY,
    title          text NOT NULL,
    "authorId"     integer NOT NULL REFERENCES person (id) ON DELETE RESTRICT,
    "translatorId" integer REFERENCES person (id) ON DELETE SET NULL
);

-- A view over a join to one person (on its key): keyed by book.id, which it carries; it
-- carries no foreign-key column, so it has no relationship.
CREATE VIEW book_with_author AS
    SELECT book.id, book.title, person.name AS author_name
    FROM book JOIN person ON person.id = book."authorId";

-- FK to a unique column that is not the primary key.
-- Expect: city.country (to-one; the column country_code does not end in _id, so the key is
-- the target table's name) and country.city (to-many), joined on country_code = code.
CREATE TABLE country (
    id   serial PRIMARY KEY,
    code text NOT NULL UNIQUE,
    name text NOT NULL
);

CREATE TABLE city (
    id           serial PRIMARY KEY,
    name         text NOT NULL,
    country_code text REFERENCES country (code) ON UPDATE CASCADE
);

-- One-to-one through a unique FK column, in a table that has a second FK.
-- Expect: passport.holder and person.passport, both to-one (one-to-one, unique FK),
-- ON DELETE CASCADE. The second FK is plain: passport.issuer_country (to-one) and
-- country.passport (to-many). Because one of its two FKs is one-to-one on its own,
-- passport is never a many-to-many helper, not even under .anyTwoForeignKeys.
CREATE TABLE passport (
    id                serial PRIMARY KEY,
    number            text NOT NULL,
    holder_id         integer NOT NULL UNIQUE REFERENCES person (id) ON DELETE CASCADE,
    issuer_country_id integer REFERENCES country (id)
);

-- One-to-one where the FK is the primary key itself.
-- Expect: profile.user and app_user.profile, both to-one. ON DELETE CASCADE.
CREATE TABLE app_user (
    id    serial PRIMARY KEY,
    login text NOT NULL UNIQUE
);

CREATE TABLE profile (
    user_id integer PRIMARY KEY REFERENCES app_user (id) ON DELETE CASCADE,
    bio     text
);

-- FK across schemas: price (in this schema) refers to currency in the other schema.
-- Expect: price.currency (to-one) and, on the entity named <other_schema>.currency,
-- price (to-many).
CREATE SCHEMA :"other_schema";

CREATE TABLE :"other_schema".currency (
    id   serial PRIMARY KEY,
    code char(3) NOT NULL UNIQUE,
    name text NOT NULL
);

CREATE TABLE price (
    id          serial PRIMARY KEY,
    amount      numeric(12, 2) NOT NULL,
    currency_id integer NOT NULL REFERENCES :"other_schema".currency (id)
);

-- Partitioned tables. Each is one entity (its root); its partitions are not entities.
CREATE TABLE sensor (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

-- FK declared on the partitioned root (PostgreSQL clones it onto each partition).
-- Expect: measurement.sensor (to-one) and sensor.measurement (to-many), once each.
-- ON DELETE CASCADE.
CREATE TABLE measurement (
    id        bigserial,
    sensor_id integer NOT NULL REFERENCES sensor (id) ON DELETE CASCADE,
    taken_on  date NOT NULL,
    value     double precision,
    PRIMARY KEY (id, taken_on)
) PARTITION BY RANGE (taken_on);

CREATE TABLE measurement_2024 PARTITION OF measurement
    FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE measurement_2025 PARTITION OF measurement
    FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');

-- No FK on the root, but the same FK declared on every leaf partition (reading_2025 is
-- itself partitioned: its leaves carry the FK, it does not). This counts as the root's FK.
-- Expect: reading.sensor (to-one; also the constraint's name reading.reading_sensor) and
-- sensor.reading (to-many), once each.
CREATE TABLE reading (
    id        bigserial,
    sensor_id integer NOT NULL,
    taken_at  timestamptz NOT NULL,
    value     double precision,
    PRIMARY KEY (id, taken_at)
) PARTITION BY RANGE (taken_at);

CREATE TABLE reading_2024 PARTITION OF reading
    FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2025-01-01 00:00:00+00');
CREATE TABLE reading_2025 PARTITION OF reading
    FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2026-01-01 00:00:00+00')
    PARTITION BY RANGE (taken_at);
CREATE TABLE reading_2025_h1 PARTITION OF reading_2025
    FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2025-07-01 00:00:00+00');
CREATE TABLE reading_2025_h2 PARTITION OF reading_2025
    FOR VALUES FROM ('2025-07-01 00:00:00+00') TO ('2026-01-01 00:00:00+00');

ALTER TABLE reading_2024
    ADD CONSTRAINT reading_sensor FOREIGN KEY (sensor_id) REFERENCES sensor (id);
ALTER TABLE reading_2025_h1
    ADD CONSTRAINT reading_sensor FOREIGN KEY (sensor_id) REFERENCES sensor (id);
ALTER TABLE reading_2025_h2
    ADD CONSTRAINT reading_sensor FOREIGN KEY (sensor_id) REFERENCES sensor (id);

-- A table referencing the partitioned table's (composite) key. PostgreSQL records one
-- extra pg_constraint row per referenced partition (conparentid set); they are one FK.
-- Expect: annotation.measurement (to-one) and measurement.annotation (to-many).
-- ON DELETE CASCADE.
CREATE TABLE annotation (
    id                   serial PRIMARY KEY,
    measurement_id       bigint NOT NULL,
    measurement_taken_on date NOT NULL,
    note                 text NOT NULL,
    FOREIGN KEY (measurement_id, measurement_taken_on)
        REFERENCES measurement (id, taken_on) ON DELETE CASCADE
);

-- A table referencing one partition directly: the FK refers to the root.
-- Expect: measurement_flag.measurement (to-one, target measurement, not measurement_2024)
-- and measurement.measurement_flag (to-many).
CREATE TABLE measurement_flag (
    id             serial PRIMARY KEY,
    measurement_id bigint NOT NULL,
    taken_on       date NOT NULL,
    flag           text NOT NULL,
    FOREIGN KEY (measurement_id, taken_on) REFERENCES measurement_2024 (id, taken_on)
);

-- Many-to-many helper with an extra column; its two FK columns are its primary key.
-- Expect under .keyed (default) and .anyTwoForeignKeys: member.club and club.member
-- (many-to-many via membership); under .strict: none (joined_at is outside the two FKs).
-- Always: member.membership, club.membership (to-many), membership.member,
-- membership.club (to-one). ON DELETE CASCADE.
CREATE TABLE member (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE club (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE membership (
    member_id integer NOT NULL REFERENCES member (id) ON DELETE CASCADE,
    club_id   integer NOT NULL REFERENCES club (id) ON DELETE CASCADE,
    joined_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (member_id, club_id)
);

-- Helper without any unique key: a pair may be stored twice.
-- Expect under .anyTwoForeignKeys only: item.tag and tag.item (many-to-many via tag_link,
-- counted: count(for:) may be 2); under .keyed and .strict: none.
-- Always: item.tag_link, tag.tag_link (to-many), tag_link.item, tag_link.tag (to-one).
CREATE TABLE item (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE tag (
    id    serial PRIMARY KEY,
    label text NOT NULL
);

CREATE TABLE tag_link (
    item_id integer NOT NULL REFERENCES item (id) ON DELETE CASCADE,
    tag_id  integer NOT NULL REFERENCES tag (id) ON DELETE CASCADE
);

-- Self many-to-many through a helper.
-- Expect under every rule (no extra column, key = the two FKs): player <-> player through
-- friendship, once per direction (a_id -> b_id and b_id -> a_id), both would be called
-- player, so the bare player.player is ambiguous. Always: friendship.a and friendship.b
-- (to-one) and player.friendship_by_a_id, player.friendship_by_b_id (to-many; the bare
-- player.friendship is ambiguous).
CREATE TABLE player (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE friendship (
    a_id integer NOT NULL REFERENCES player (id) ON DELETE CASCADE,
    b_id integer NOT NULL REFERENCES player (id) ON DELETE CASCADE,
    PRIMARY KEY (a_id, b_id),
    CHECK (a_id <> b_id)
);

-- Quoted mixed-case and reserved-word names.
-- Expect: "LineItem".order (to-one, from "orderId") and "Order"."LineItem" (to-many);
-- "Order" has an attribute named select. ON DELETE CASCADE.
CREATE TABLE "Order" (
    id       serial PRIMARY KEY,
    "select" text NOT NULL,
    "placedAt" timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE "LineItem" (
    id        serial PRIMARY KEY,
    "orderId" integer NOT NULL REFERENCES "Order" (id) ON DELETE CASCADE,
    quantity  integer NOT NULL CHECK (quantity > 0)
);

-- Two identical FK constraints (same columns, same target, different names): one FK.
-- Expect: invoice.customer (to-one; also answers to invoice_customer and
-- invoice_customer_again) and customer.invoice (to-many), once each, not ambiguous.
-- invoice is not a self many-to-many helper customer <-> customer under any rule.
CREATE TABLE customer (
    id   serial PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE invoice (
    id          serial PRIMARY KEY,
    customer_id integer NOT NULL,
    total       numeric(12, 2) NOT NULL,
    CONSTRAINT invoice_customer FOREIGN KEY (customer_id) REFERENCES customer (id),
    CONSTRAINT invoice_customer_again FOREIGN KEY (customer_id) REFERENCES customer (id)
);

-- Tables without a primary key, keyed by a unique key (the Relationships article, "Keys
-- without a primary key"): a unique constraint, else a unique index, neither partial nor on
-- expressions, whose columns are all NOT NULL; a constraint before an index, then the fewest
-- columns, then the name.
-- The shape of a French teaching database (regions, departments, towns): every table has
-- id SERIAL UNIQUE NOT NULL and a code UNIQUE NOT NULL, foreign keys refer to the codes, and
-- nothing is a primary key.
-- Expect: regions keyed by code (regions_code_key: one column, like regions_id_key and
-- regions_name_key, and first by name); departments keyed by code (departments_code_key);
-- towns keyed by id (towns_id_key: one column, before the two of towns_code_department_key).
-- departments.regions (to-one, region → code; the column does not end in _id) and
-- regions.departments (to-many); towns.departments (to-one, department → code) and
-- departments.towns (to-many). The attribute departments.region keeps its name.
CREATE TABLE regions (
    id      serial UNIQUE NOT NULL,
    code    varchar(4) UNIQUE NOT NULL,
    capital varchar(10) NOT NULL,
    name    text UNIQUE NOT NULL
);

CREATE TABLE departments (
    id      serial UNIQUE NOT NULL,
    code    varchar(4) UNIQUE NOT NULL,
    capital varchar(10) NOT NULL,
    region  varchar(4) NOT NULL REFERENCES regions (code) ON UPDATE CASCADE,
    name    text NOT NULL
);

CREATE TABLE towns (
    id         serial UNIQUE NOT NULL,
    code       varchar(10) NOT NULL,
    article    text,
    name       text NOT NULL,
    department varchar(4) NOT NULL REFERENCES departments (code) ON UPDATE CASCADE,
    UNIQUE (code, department)
);

-- A unique column that accepts NULL: two rows may both hold NULL there, so it tells no
-- rows apart. Expect: no key; read-only.
CREATE TABLE nullable_code (
    code  text UNIQUE,
    label text NOT NULL
);

-- A partial unique index: unique only among some rows. Expect: no key; read-only.
CREATE TABLE partial_code (
    code  text NOT NULL,
    label text
);
CREATE UNIQUE INDEX partial_code_code ON partial_code (code) WHERE label IS NOT NULL;

-- A unique index and no constraint. Expect: keyed by the index (code), the expression
-- index on lower(label) left aside.
CREATE TABLE index_keyed (
    code  text NOT NULL,
    label text NOT NULL
);
CREATE UNIQUE INDEX index_keyed_code ON index_keyed (code);
CREATE UNIQUE INDEX index_keyed_label ON index_keyed (lower(label));

-- A constraint before an index, even one of fewer columns. Expect: keyed by (a, b)
-- (constraint_first_a_b_key), not by the index on c.
CREATE TABLE constraint_first (
    a integer NOT NULL,
    b integer NOT NULL,
    c integer NOT NULL,
    UNIQUE (a, b)
);
CREATE UNIQUE INDEX constraint_first_c ON constraint_first (c);

-- Inheritance: capital INHERITS place. PostgreSQL copies columns and NOT NULL to the child,
-- not keys nor foreign keys; capital declares its own primary key. Expect: capital's parent
-- is place; place.country (to-one, from country_id) and country.place (to-many); the
-- parent's foreign key applies to the child, which carries its column: capital.country
-- (to-one, constraint place_country_id_fkey) and country.capital (to-many). A fetch of
-- place includes capital's rows, as capital objects; FetchRequest.only leaves them out.
CREATE TABLE place (
    id         serial PRIMARY KEY,
    name       text NOT NULL,
    country_id integer REFERENCES country (id)
);

CREATE TABLE capital (
    since integer,
    PRIMARY KEY (id)
) INHERITS (place);

-- Views of every kind, over the regions, departments and towns above. A view that carries a
-- table's key, every other table joined to one row, has that key; one with an aggregate has
-- none unless an override declares it (Override.primaryKey). The foreign-key columns a view
-- carries are its relationships (to-one, and the inverse to-many named after the view).
-- What each takes as writes is PostgreSQL's answer (pg_relation_is_updatable).
-- A simple view over one table: keyed by departments.code; big_departments.regions (to-one,
-- from region) and regions.big_departments; takes inserts, updates and deletes.
CREATE VIEW big_departments AS SELECT code, name, region FROM departments WHERE region = '84';

-- An aggregate: no key; it carries region, so department_counts.regions (to-one) and
-- regions.department_counts; takes no write (refused, naming the view, before it is sent).
CREATE VIEW department_counts AS SELECT region, count(*) AS departments FROM departments GROUP BY region;

-- A join to one department (on its code) with an INSTEAD OF UPDATE trigger: keyed by
-- towns.id; takes updates only.
CREATE VIEW town_names AS
    SELECT t.id, t.name, d.name AS department_name FROM towns t JOIN departments d ON d.code = t.department;
CREATE FUNCTION rename_town() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE towns SET name = NEW.name WHERE id = OLD.id;
    RETURN NEW;
END $$;
CREATE TRIGGER rename_town INSTEAD OF UPDATE ON town_names FOR EACH ROW EXECUTE FUNCTION rename_town();

-- A materialized view, with the unique index REFRESH … CONCURRENTLY needs: no key (an
-- aggregate; the index's column may be NULL as far as the catalog says); it carries region,
-- unique by the index: region_sizes.regions and regions.region_sizes are one-to-one; takes no write.
CREATE MATERIALIZED VIEW region_sizes AS
    SELECT region, count(*)::int4 AS departments FROM departments GROUP BY region;
CREATE UNIQUE INDEX region_sizes_region ON region_sizes (region);
