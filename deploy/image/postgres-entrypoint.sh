#!/bin/bash
# First start: initdb, a login role and a database for the node, password auth from the network.
#   POSTGRES_USER (silentshard), POSTGRES_DB (silentshard), POSTGRES_PASSWORD_FILE (required: a mounted
#   Secret, never an image layer or a plain variable). Then runs the server in the foreground.
set -euo pipefail
user=${POSTGRES_USER:-silentshard}
db=${POSTGRES_DB:-silentshard}
[[ -r ${POSTGRES_PASSWORD_FILE:-} ]] || { echo "postgres-entrypoint: POSTGRES_PASSWORD_FILE must name a readable file" >&2; exit 1; }
[[ $user =~ ^[a-z_][a-z0-9_]*$ && $db =~ ^[a-z_][a-z0-9_]*$ ]] || { echo "postgres-entrypoint: bad user or database name" >&2; exit 1; }
if [[ ! -s $PGDATA/PG_VERSION ]]; then
  superuser_password=$(mktemp)
  od -An -tx1 -N24 /dev/urandom | tr -d ' \n' > "$superuser_password"   # never used: local login is peer/trust over the socket only
  initdb --username=postgres --pwfile="$superuser_password" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" > /dev/null
  rm -f "$superuser_password"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" -w start > /dev/null
  # psql reads the password from the file itself (a backtick \set), so it is on no command line; :'password'
  # quotes it as a literal.
  psql -v ON_ERROR_STOP=1 -h /var/run/postgresql -U postgres -d postgres -q -v user="$user" -v db="$db" <<'SQL'
\set password `tr -d '\r\n' < "$POSTGRES_PASSWORD_FILE"`
CREATE ROLE :"user" LOGIN PASSWORD :'password';
CREATE DATABASE :"db" OWNER :"user";
-- The node compares the server's identity at open (restore detection, docs/node-server.md "Backup and restore").
GRANT pg_monitor TO :"user";
SQL
  pg_ctl -D "$PGDATA" -m fast -w stop > /dev/null
  echo "postgres-entrypoint: initialised $PGDATA (role $user, database $db)" >&2
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql
