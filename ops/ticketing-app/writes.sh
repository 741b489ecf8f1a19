#!/bin/sh
# The "ticketing app" of compose.yaml: another application writing the database the cache serves, with plain
# SQL and no call to the cache. Every TICKETING_INTERVAL seconds it books 1-4 seats of a random schedule
# (restocking at the end) and retitles a random concert, each in its own transaction. Only the binlog capture
# can tell the cache about these changes.
set -eu
interval="${TICKETING_INTERVAL:-1}"
sql() {
  mariadb --host="${TICKETING_DB_HOST:-db}" --user="${TICKETING_DB_USER:-ticketing}" \
    --password="$TICKETING_DB_PASSWORD" --batch --skip-column-names "${TICKETING_DB_NAME:-concert_cache}" -e "$1"
}
echo "ticketing-app: writing every ${interval}s"
while true; do
  sql "
    SET @schedule = (SELECT FLOOR(MIN(id) + RAND() * (MAX(id) - MIN(id) + 1)) FROM schedule);
    UPDATE schedule SET total_seats = IF(total_seats > 4, total_seats - 1 - FLOOR(RAND() * 4), 5000)
      WHERE id = @schedule;
    SET @concert = (SELECT FLOOR(MIN(id) + RAND() * (MAX(id) - MIN(id) + 1)) FROM concert);
    UPDATE concert SET title = CONCAT(SUBSTRING_INDEX(title, ' [', 1), ' [', DATE_FORMAT(UTC_TIMESTAMP(), '%H:%i:%s'), ']'),
      updated_at = UTC_TIMESTAMP(3) WHERE id = @concert;"
  # The healthcheck's heartbeat: the last time a round of writes committed.
  date +%s > /tmp/last-write
  sleep "$interval"
done
