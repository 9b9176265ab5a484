#!/bin/sh
# Counts the server instructions of a write for pgstore's put3 and the
# layouts it was measured against (see main.go): starts a throwaway
# PostgreSQL under callgrind (initdb into a temporary directory, a free
# loopback port, as the postgres user when run as root) and runs main.go
# against it. Run it in store/pgstore. It takes a few minutes.
set -eu
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || bin=$(dirname "$(command -v pg_ctl)")
dir=$(mktemp -d)
as=""
if [ "$(id -u)" = 0 ]; then
	as="runuser -u postgres --"
	chown postgres "$dir"
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
$as "$bin/initdb" -D "$dir/data" -U steady -A trust -E UTF8 --locale=C --no-sync >/dev/null
$as valgrind --tool=callgrind --callgrind-out-file="$dir/cg.%p" "$bin/postgres" -D "$dir/data" -p "$port" -k "$dir" \
	-c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c shared_buffers=32MB -c autovacuum=off >"$dir/log" 2>&1 &
trap '$as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
i=0
until "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; do
	i=$((i + 1))
	[ $i -lt 120 ] || { cat "$dir/log"; exit 1; }
	sleep 1
done
GOWORK=off go run ./testdata/instr -url "postgres://steady@127.0.0.1:$port/postgres" -out "$dir" "$@"
