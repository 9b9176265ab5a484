-- The layouts that BenchmarkUpdate's raw UPDATE and pgstore's put3 are
-- measured against (see main.go). %[1]s is a schema of pgstore's current
-- layout, made by pgstore.New.
CREATE TABLE raw (k text PRIMARY KEY, rev bigint NOT NULL, v bytea NOT NULL);
INSERT INTO raw VALUES ('raw', 1, ''), ('rawfn', 1, ''), ('rawlog', 1, '');

-- The raw UPDATE inside a PL/pgSQL function.
CREATE FUNCTION rawfn(wkey text, wvalue bytea, krev bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	UPDATE raw SET v = wvalue, rev = rev + 1 WHERE k = wkey AND rev = krev;
	RETURN krev + 1;
END $$;

-- That, and a log row: history with no revision order.
CREATE TABLE rawlog (rev bigint PRIMARY KEY, key bytea NOT NULL, value bytea, create_rev bigint NOT NULL, prev_rev bigint NOT NULL);
CREATE FUNCTION rawlog(wkey text, wvalue bytea, krev bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	UPDATE raw SET v = wvalue, rev = rev + 1 WHERE k = wkey AND rev = krev;
	INSERT INTO rawlog (rev, key, value, create_rev, prev_rev) VALUES (krev + 1, convert_to(wkey, 'UTF8'), wvalue, 1, krev);
	RETURN krev + 1;
END $$;

-- kine's layout: the log alone, a key's value its newest row; the revision
-- is max(rev) + 1, and a write that loses the race for it (ON CONFLICT)
-- tries again with a new snapshot.
CREATE TABLE kine (rev bigint PRIMARY KEY, key bytea NOT NULL, value bytea, create_rev bigint NOT NULL, prev_rev bigint NOT NULL);
CREATE INDEX ON kine (key, rev);
INSERT INTO kine VALUES (1, 'kine', '', 1, 0);
CREATE FUNCTION kine(wkey bytea, wvalue bytea, krev bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE cur bigint; actual bigint;
BEGIN
	LOOP
		INSERT INTO kine (rev, key, value, create_rev, prev_rev)
			SELECT coalesce((SELECT max(m.rev) FROM kine m), 0) + 1, wkey, wvalue, p.create_rev, p.rev
			FROM (SELECT l.rev, l.create_rev, l.value FROM kine l WHERE l.key = wkey ORDER BY l.rev DESC LIMIT 1) p
			WHERE p.rev = krev AND p.value IS NOT NULL
			ON CONFLICT (rev) DO NOTHING RETURNING rev INTO cur;
		EXIT WHEN FOUND;
		SELECT CASE WHEN l.value IS NULL THEN 0 ELSE l.rev END INTO actual FROM kine l WHERE l.key = wkey ORDER BY l.rev DESC LIMIT 1;
		IF coalesce(actual, 0) <> krev THEN
			RETURN -2 * coalesce(actual, 0);
		END IF;
	END LOOP;
	NOTIFY kine;
	RETURN cur;
END $$;

-- kv and the log, the revision drawn as kine draws it, no revision row.
CREATE TABLE kvlog_kv (key bytea PRIMARY KEY, value bytea NOT NULL, create_rev bigint NOT NULL, mod_rev bigint NOT NULL);
CREATE TABLE kvlog_log (rev bigint PRIMARY KEY, key bytea NOT NULL, value bytea, create_rev bigint NOT NULL, prev_rev bigint NOT NULL);
INSERT INTO kvlog_kv VALUES ('kvlog', '', 1, 1);
INSERT INTO kvlog_log VALUES (1, 'kvlog', '', 1, 0);
CREATE FUNCTION kvlog(wkey bytea, wvalue bytea, krev bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE cur bigint; actual bigint;
BEGIN
	LOOP
		INSERT INTO kvlog_log (rev, key, value, create_rev, prev_rev)
			SELECT coalesce((SELECT max(l.rev) FROM kvlog_log l), 0) + 1, wkey, wvalue, k.create_rev, krev
			FROM kvlog_kv k WHERE k.key = wkey AND k.mod_rev = krev
			ON CONFLICT (rev) DO NOTHING RETURNING rev INTO cur;
		EXIT WHEN FOUND;
		SELECT k.mod_rev INTO actual FROM kvlog_kv k WHERE k.key = wkey;
		IF coalesce(actual, 0) <> krev THEN
			RETURN -2 * coalesce(actual, 0);
		END IF;
	END LOOP;
	UPDATE kvlog_kv k SET value = wvalue, mod_rev = cur WHERE k.key = wkey;
	NOTIFY kvlog;
	RETURN cur;
END $$;

-- put3 with revision and kv updated by one WITH statement.
CREATE FUNCTION %[1]s.put3with(wkey bytea, wvalue bytea, krev bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE cur bigint; actual bigint; p_create bigint;
BEGIN
	WITH r AS (UPDATE %[1]s.revision SET rev = rev + 1 RETURNING rev)
	UPDATE %[1]s.kv k SET value = wvalue, mod_rev = r.rev FROM r WHERE k.key = wkey AND k.mod_rev = krev RETURNING r.rev, k.create_rev INTO cur, p_create;
	IF NOT FOUND THEN
		UPDATE %[1]s.revision SET rev = rev - 1;
		SELECT k.mod_rev INTO actual FROM %[1]s.kv k WHERE k.key = wkey;
		RETURN -2 * coalesce(actual, 0);
	END IF;
	INSERT INTO %[1]s.log (rev, key, value, create_rev, prev_rev) VALUES (cur, wkey, wvalue, p_create, krev);
	NOTIFY %[1]s;
	RETURN cur;
END $$;
