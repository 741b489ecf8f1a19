-- Runs once, when compose's db-data volume is created (the image's /docker-entrypoint-initdb.d), after the
-- image has created database concert_cache and its owner `concert` (Flyway, the seed, the admin endpoints).
-- Local demo passwords, as compose's other defaults; docs/adopting.md has the statements for a real server.

-- The binlog capture: reads the replication stream (MariaDB 10.5+ privilege names), and finds the key columns'
-- positions in INFORMATION_SCHEMA.COLUMNS, which shows only tables the user holds a privilege on.
CREATE USER IF NOT EXISTS 'concert_cache_cdc'@'%' IDENTIFIED BY 'concert-cache-cdc';
GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'concert_cache_cdc'@'%';
GRANT SELECT ON concert_cache.* TO 'concert_cache_cdc'@'%';

-- The "ticketing app" (ops/ticketing-app/writes.sh): the other application that owns the rows.
CREATE USER IF NOT EXISTS 'ticketing'@'%' IDENTIFIED BY 'ticketing';
GRANT SELECT, INSERT, UPDATE, DELETE ON concert_cache.* TO 'ticketing'@'%';
