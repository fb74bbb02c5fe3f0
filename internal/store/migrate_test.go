package store_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crashstudio/crashgame/internal/store"
)

// The migrations are written once per dialect (migrations/sqlite and
// migrations/postgres): the dialects differ in types, STRICT and WITHOUT
// ROWID, identity columns and conditional ADD COLUMN, and each file stays
// plain SQL of its dialect. What keeps the two folders from drifting apart is
// this test: the same migrations, and a fresh database of either dialect with
// the same tables, columns, nullability and indexes.

// TestMigrationsSameNames: both dialects carry the same migrations, up and
// down, under the same names (deployed databases record the names).
func TestMigrationsSameNames(t *testing.T) {
	names := func(dialect string) []string {
		entries, err := os.ReadDir(filepath.Join("migrations", dialect))
		if err != nil {
			t.Fatalf("read %s migrations: %v", dialect, err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	sqlite, postgres := names(store.DialectSQLite), names(store.DialectPostgres)
	if len(sqlite) == 0 || !slices.Equal(sqlite, postgres) {
		t.Fatalf("migration files differ:\nsqlite:   %v\npostgres: %v", sqlite, postgres)
	}
}

// schemaQueries read, per dialect, a migrated database's schema as one
// space-separated list of facts that do not depend on the dialect: each
// column with its nullability ("table.column null|not-null"), each named
// index with its columns in order and whether it is unique or partial.
// bun's own tables are left out.
var schemaQueries = map[string]struct{ columns, indexes string }{
	store.DialectSQLite: {
		columns: `SELECT group_concat(m.name || '.' || c.name || CASE WHEN c."notnull" OR c.pk > 0 THEN ':not-null' ELSE ':null' END, ' ')
			FROM sqlite_schema AS m, pragma_table_info(m.name) AS c
			WHERE m.type = 'table' AND m.name NOT LIKE 'bun\_%' ESCAPE '\' AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'`,
		indexes: `SELECT group_concat(l.name || '(' ||
				(SELECT group_concat(i.name, ',' ORDER BY i.seqno) FROM pragma_index_info(l.name) AS i) || ')' ||
				CASE WHEN l."unique" THEN ':unique' ELSE '' END || CASE WHEN l.partial THEN ':partial' ELSE '' END, ' ')
			FROM sqlite_schema AS m, pragma_index_list(m.name) AS l
			WHERE m.type = 'table' AND l.name LIKE '%\_idx' ESCAPE '\'`,
	},
	store.DialectPostgres: {
		columns: `SELECT string_agg(table_name || '.' || column_name || CASE WHEN is_nullable = 'NO' THEN ':not-null' ELSE ':null' END, ' ')
			FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name NOT LIKE 'bun\_%'`,
		indexes: `SELECT string_agg(i.relname || '(' ||
				(SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
					JOIN pg_attribute AS a ON a.attrelid = x.indrelid AND a.attnum = k.attnum) || ')' ||
				CASE WHEN x.indisunique THEN ':unique' ELSE '' END || CASE WHEN x.indpred IS NOT NULL THEN ':partial' ELSE '' END, ' ')
			FROM pg_index AS x JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_namespace AS n ON n.oid = i.relnamespace
			WHERE n.nspname = current_schema() AND i.relname LIKE '%\_idx'`,
	},
}

// schemaFacts returns the sorted facts of s's schema (schemaQueries).
func schemaFacts(t *testing.T, s *store.Store) (columns, indexes []string) {
	t.Helper()
	q := schemaQueries[s.Dialect()]
	read := func(query string) []string {
		var list string
		if err := s.QueryRowForTest(t.Context(), query).Scan(&list); err != nil {
			t.Fatalf("%s: read schema: %v", s.Dialect(), err)
		}
		facts := strings.Fields(list)
		slices.Sort(facts)
		return facts
	}
	return read(q.columns), read(q.indexes)
}

// TestMigrationsSameSchema: a fresh database migrated by each backend has
// the same columns, nullability and indexes as one migrated on SQLite.
func TestMigrationsSameSchema(t *testing.T) {
	t.Parallel()
	type schema struct{ columns, indexes []string }
	read := func(b backend) schema {
		var sc schema
		sc.columns, sc.indexes = schemaFacts(t, openMigrated(t, b.open(t)))
		if len(sc.columns) == 0 || len(sc.indexes) == 0 {
			t.Fatalf("%s: schema read nothing: %d columns, %d indexes", b.name, len(sc.columns), len(sc.indexes))
		}
		return sc
	}
	want := read(backends[0])
	for _, b := range backends[1:] {
		got := read(b)
		for _, d := range []struct {
			what      string
			got, want []string
		}{{"columns", got.columns, want.columns}, {"indexes", got.indexes, want.indexes}} {
			if !slices.Equal(d.got, d.want) {
				t.Errorf("%s differ between %s and %s:\nonly %[2]s: %[4]v\nonly %[3]s: %[5]v",
					d.what, b.name, backends[0].name, missing(d.got, d.want), missing(d.want, d.got))
			}
		}
	}
}

// missing returns the elements of a that b lacks; both are sorted.
func missing(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}
