CREATE SCHEMA IF NOT EXISTS relate_tracking;

CREATE TABLE IF NOT EXISTS relate_tracking.change (
    id         bigserial PRIMARY KEY,
    payload    jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Only the owner (who ran relate enable) writes here, through the triggers' functions;
-- readers are granted USAGE and SELECT by name (relate enable --grant-to ROLE).
REVOKE ALL ON SCHEMA relate_tracking FROM PUBLIC;
REVOKE ALL ON TABLE relate_tracking.change FROM PUBLIC;
REVOKE ALL ON SEQUENCE relate_tracking.change_id_seq FROM PUBLIC;

-- Installs (again) the four triggers of one table, and their function.
CREATE OR REPLACE FUNCTION relate_tracking.track(target regclass) RETURNS void
LANGUAGE plpgsql AS $function$
DECLARE
    notifier text := format('relate_tracking.%I', 'notify_' || target::oid);
    key_row text;
    changed_row text;
    column_count int;
    -- format()'s arguments, not replace(): each is put in once, and a column's name
    -- is never read as another placeholder.
    body text := $body$
DECLARE
    keys jsonb;
    old_keys jsonb;
    changed jsonb;
    payload text;
    stored bigint;
BEGIN
    -- A truncate names no row (it has no transition tables): its table is read again
    -- whole, as logical decoding's truncate message has it.
    IF %1$s AND TG_OP <> 'TRUNCATE' THEN
        BEGIN
            IF TG_OP = 'DELETE' THEN
                SELECT jsonb_agg(%2$s) INTO keys FROM relate_old_rows r;
            ELSE
                SELECT jsonb_agg(%2$s) INTO keys FROM relate_new_rows r;
            END IF;
            -- A statement that touched no row.
            IF keys IS NULL THEN
                RETURN NULL;
            END IF;
            -- An update of one row names the columns whose bytes it changed ("c",
            -- of the "n" columns the table had when tracked), in the statement that
            -- reads its key before: a listener whose answers read none of them knows
            -- the row stayed in or out of each.
            IF TG_OP = 'UPDATE' AND jsonb_array_length(keys) = 1 THEN
                SELECT jsonb_build_array(%2$s), to_jsonb(array_remove(%3$s, NULL)) INTO old_keys, changed
                  FROM relate_old_rows r, relate_new_rows n;
            ELSIF TG_OP = 'UPDATE' THEN
                SELECT jsonb_agg(%2$s) INTO old_keys FROM relate_old_rows r;
            END IF;
        EXCEPTION WHEN undefined_column THEN
            keys := NULL;
            old_keys := NULL;
            changed := NULL;
        END;
    END IF;
    payload := json_build_object(
        'x', txid_current(), 'r', TG_RELID::int8, 's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'k', left(TG_OP, 1),
        'keys', keys, 'old', old_keys, 'c', changed, 'n', CASE WHEN changed IS NOT NULL THEN %4$s END)::text;
    -- Under row-level security no key leaves in a NOTIFY, which any role that may
    -- connect can LISTEN to: the payload is stored, and the notification names its row.
    IF octet_length(payload) > 7900
       OR (keys IS NOT NULL AND (SELECT c.relrowsecurity FROM pg_catalog.pg_class c WHERE c.oid = TG_RELID)) THEN
        INSERT INTO relate_tracking.change (payload) VALUES (payload::jsonb) RETURNING id INTO stored;
        -- Payloads older than an hour go now and then, not at every statement.
        IF mod(stored, 100) = 0 THEN
            DELETE FROM relate_tracking.change WHERE created_at < now() - interval '1 hour';
        END IF;
        payload := json_build_object(
            'x', txid_current(), 'r', TG_RELID::int8, 's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'k', left(TG_OP, 1),
            'id', stored)::text;
    END IF;
    PERFORM pg_notify('relate_changes', payload);
    RETURN NULL;
END
$body$;
BEGIN
    PERFORM relate_tracking.untrack(target);
    -- The key the model takes (the Relationships article): the primary key; else a
    -- unique constraint, then a unique index, neither partial nor on expressions nor
    -- under another collation or operator class than its columns', with every column
    -- NOT NULL: fewest columns first, then by name.
    SELECT 'jsonb_build_array(' || string_agg(format('r.%I', a.attname), ', ' ORDER BY k.position) || ')'
      INTO key_row
      FROM (SELECT i.indexrelid, i.indrelid, i.indkey, i.indnkeyatts
              FROM pg_index i
              JOIN pg_class ic ON ic.oid = i.indexrelid
              LEFT JOIN pg_constraint con
                ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u')
             WHERE i.indrelid = target AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
               -- Under the columns' own collations and default operator classes.
               AND NOT EXISTS (
                     SELECT FROM unnest(i.indkey::int2[], i.indcollation::oid[], i.indclass::oid[]) WITH ORDINALITY AS n(attnum, coll, opclass, position)
                       JOIN pg_attribute ca ON ca.attrelid = i.indrelid AND ca.attnum = n.attnum
                       JOIN pg_opclass oc ON oc.oid = n.opclass
                      WHERE n.position <= i.indnkeyatts AND (n.coll <> ca.attcollation OR NOT oc.opcdefault))
               AND (i.indisprimary OR NOT EXISTS (
                     SELECT FROM unnest(i.indkey) WITH ORDINALITY AS n(attnum, position)
                       JOIN pg_attribute na ON na.attrelid = i.indrelid AND na.attnum = n.attnum
                      WHERE n.position <= i.indnkeyatts AND NOT na.attnotnull))
             ORDER BY i.indisprimary DESC, con.oid IS NULL, i.indnkeyatts, coalesce(con.conname, ic.relname)
             LIMIT 1) i
      CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
     WHERE k.position <= i.indnkeyatts;
    -- Each column compared by its bytes (record_image_eq, as REFRESH MATERIALIZED VIEW
    -- CONCURRENTLY does): any type, with or without an equality operator; a value
    -- equal but stored otherwise (1.0 and 1.00) counts as changed, never the reverse.
    -- Generated columns apart, as the feeds leave them out.
    SELECT 'ARRAY[' || string_agg(format('CASE WHEN NOT record_image_eq(ROW(r.%I), ROW(n.%I)) THEN %L END', a.attname, a.attname, a.attname),
                                  ', ' ORDER BY a.attnum) || ']::text[]',
           count(*)
      INTO changed_row, column_count
      FROM pg_attribute a
     WHERE a.attrelid = target AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
    body := format(body, (key_row IS NOT NULL)::text, coalesce(key_row, 'NULL'), coalesce(changed_row, 'ARRAY[]::text[]'), column_count);
    -- Runs as its owner, whoever writes: a writer needs nothing on relate_tracking.
    EXECUTE format('CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER '
                   'SET search_path = pg_catalog, pg_temp AS %L', notifier, body);
    EXECUTE format('REVOKE ALL ON FUNCTION %s() FROM PUBLIC', notifier);
    EXECUTE format('CREATE TRIGGER relate_insert AFTER INSERT ON %s REFERENCING NEW TABLE AS relate_new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION %s()', target, notifier);
    EXECUTE format('CREATE TRIGGER relate_update AFTER UPDATE ON %s REFERENCING OLD TABLE AS relate_old_rows '
                   'NEW TABLE AS relate_new_rows FOR EACH STATEMENT EXECUTE FUNCTION %s()', target, notifier);
    EXECUTE format('CREATE TRIGGER relate_delete AFTER DELETE ON %s REFERENCING OLD TABLE AS relate_old_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION %s()', target, notifier);
    EXECUTE format('CREATE TRIGGER relate_truncate AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s()',
                   target, notifier);
END
$function$;

CREATE OR REPLACE FUNCTION relate_tracking.untrack(target regclass) RETURNS void
LANGUAGE plpgsql AS $function$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS relate_insert ON %s', target);
    EXECUTE format('DROP TRIGGER IF EXISTS relate_update ON %s', target);
    EXECUTE format('DROP TRIGGER IF EXISTS relate_delete ON %s', target);
    EXECUTE format('DROP TRIGGER IF EXISTS relate_truncate ON %s', target);
    EXECUTE format('DROP FUNCTION IF EXISTS relate_tracking.%I()', 'notify_' || target::oid);
END
$function$;

REVOKE ALL ON FUNCTION relate_tracking.track(regclass) FROM PUBLIC;
REVOKE ALL ON FUNCTION relate_tracking.untrack(regclass) FROM PUBLIC;

-- Tells listeners that a definition may have changed, so that they read the catalog
-- then and not at every batch of notifications. Only a superuser may make event
-- triggers: installed by another role, there are none, and listeners read the catalog
-- at every batch. DROP SCHEMA relate_tracking CASCADE takes them with the function.
CREATE OR REPLACE FUNCTION relate_tracking.definition_changed() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
BEGIN
    PERFORM pg_notify('relate_changes', '{"ddl":1}');
END
$function$;
REVOKE ALL ON FUNCTION relate_tracking.definition_changed() FROM PUBLIC;

DO $do$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        IF NOT EXISTS (SELECT FROM pg_event_trigger WHERE evtname = 'relate_ddl') THEN
            CREATE EVENT TRIGGER relate_ddl ON ddl_command_end EXECUTE PROCEDURE relate_tracking.definition_changed();
        END IF;
        IF NOT EXISTS (SELECT FROM pg_event_trigger WHERE evtname = 'relate_drop') THEN
            CREATE EVENT TRIGGER relate_drop ON sql_drop EXECUTE PROCEDURE relate_tracking.definition_changed();
        END IF;
    END IF;
END
$do$;
