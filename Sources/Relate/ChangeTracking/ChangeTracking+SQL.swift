extension ChangeTracking {
    /// The schema of Relate's own objects. The catalog reader never reads it.
    public static let schema = "relate_tracking"
    /// The channel every change is notified on.
    public static let channel = "relate_changes"

    /// Everything `relate enable` installs once per database, idempotent. `sql/change_tracking.sql`
    /// is this text (`relate enable --print-sql`; a test keeps the file up to date).
    ///
    /// One statement-level trigger per table and operation, with a transition table: one
    /// notification per statement, naming the table, the operation, the writing transaction
    /// and the primary keys it touched (`old`: an update's keys before). A payload over
    /// NOTIFY's 8,000 bytes is stored in `relate_tracking.change` and the notification names its row.
    /// A table without a primary key is notified without keys. `c` lists the table's columns,
    /// so that a context tells a table altered since it read the model.
    public static let installSQL = #"""
        CREATE SCHEMA IF NOT EXISTS relate_tracking;

        CREATE TABLE IF NOT EXISTS relate_tracking.change (
            id         bigserial PRIMARY KEY,
            payload    jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        );

        CREATE OR REPLACE FUNCTION relate_tracking.notify_change() RETURNS trigger
        LANGUAGE plpgsql AS $function$
        DECLARE
            key_columns text;
            table_columns text;
            keys jsonb;
            old_keys jsonb;
            payload text;
            stored bigint;
        BEGIN
            SELECT string_agg(format('%I', a.attname), ', ' ORDER BY k.position)
              INTO key_columns
              FROM pg_index i
              CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
              JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
             WHERE i.indrelid = TG_RELID AND i.indisprimary;
            SELECT string_agg(a.attname, ',' ORDER BY a.attnum) INTO table_columns
              FROM pg_attribute a
             WHERE a.attrelid = TG_RELID AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
            IF key_columns IS NOT NULL THEN
                IF TG_OP = 'DELETE' THEN
                    EXECUTE format('SELECT jsonb_agg(jsonb_build_array(%s)) FROM relate_old_rows', key_columns) INTO keys;
                ELSE
                    EXECUTE format('SELECT jsonb_agg(jsonb_build_array(%s)) FROM relate_new_rows', key_columns) INTO keys;
                END IF;
                IF TG_OP = 'UPDATE' THEN
                    EXECUTE format('SELECT jsonb_agg(jsonb_build_array(%s)) FROM relate_old_rows', key_columns) INTO old_keys;
                END IF;
                -- A statement that touched no row.
                IF keys IS NULL THEN
                    RETURN NULL;
                END IF;
            END IF;
            payload := jsonb_build_object(
                'x', txid_current(), 's', TG_TABLE_SCHEMA, 't', TG_TABLE_NAME, 'k', left(TG_OP, 1),
                'keys', keys, 'old', old_keys, 'c', table_columns)::text;
            IF octet_length(payload) > 7900 THEN
                DELETE FROM relate_tracking.change WHERE created_at < now() - interval '1 hour';
                INSERT INTO relate_tracking.change (payload) VALUES (payload::jsonb) RETURNING id INTO stored;
                payload := jsonb_build_object('x', txid_current(), 'id', stored)::text;
            END IF;
            PERFORM pg_notify('relate_changes', payload);
            RETURN NULL;
        END
        $function$;

        -- Installs (again) the three triggers of one table.
        CREATE OR REPLACE FUNCTION relate_tracking.track(target regclass) RETURNS void
        LANGUAGE plpgsql AS $function$
        BEGIN
            PERFORM relate_tracking.untrack(target);
            EXECUTE format('CREATE TRIGGER relate_insert AFTER INSERT ON %s REFERENCING NEW TABLE AS relate_new_rows '
                           'FOR EACH STATEMENT EXECUTE FUNCTION relate_tracking.notify_change()', target);
            EXECUTE format('CREATE TRIGGER relate_update AFTER UPDATE ON %s REFERENCING OLD TABLE AS relate_old_rows '
                           'NEW TABLE AS relate_new_rows FOR EACH STATEMENT EXECUTE FUNCTION relate_tracking.notify_change()', target);
            EXECUTE format('CREATE TRIGGER relate_delete AFTER DELETE ON %s REFERENCING OLD TABLE AS relate_old_rows '
                           'FOR EACH STATEMENT EXECUTE FUNCTION relate_tracking.notify_change()', target);
        END
        $function$;

        CREATE OR REPLACE FUNCTION relate_tracking.untrack(target regclass) RETURNS void
        LANGUAGE plpgsql AS $function$
        BEGIN
            EXECUTE format('DROP TRIGGER IF EXISTS relate_insert ON %s', target);
            EXECUTE format('DROP TRIGGER IF EXISTS relate_update ON %s', target);
            EXECUTE format('DROP TRIGGER IF EXISTS relate_delete ON %s', target);
        END
        $function$;
        """#

    /// Gives the triggers to the tables of the schemas given (`$1`, a text array), in one
    /// statement, and answers their names: ordinary and partitioned tables, not partitions
    /// (the root's trigger covers them), not Relate's own.
    static let trackSQL = """
        SELECT t.target::text FROM (
          SELECT c.oid::regclass AS target FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = ANY($1) AND n.nspname <> 'relate_tracking' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        ) t CROSS JOIN LATERAL relate_tracking.track(t.target)
        ORDER BY 1
        """

    /// The tables that have Relate's triggers, in any schema.
    static let trackedTablesSQL = """
        SELECT DISTINCT t.tgrelid::regclass::text FROM pg_trigger t
         WHERE t.tgname IN ('relate_insert', 'relate_update', 'relate_delete') AND NOT t.tgisinternal
         ORDER BY 1
        """
}
