package testenv

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartPostgres starts a real cluster, makes two databases and checks
// that each is its own: a table made in one is not in the other.
func TestStartPostgres(t *testing.T) {
	pg := StartPostgres(t, 17400, 17419, PostgresOptions{})
	ctx := context.Background()
	a, b := pg.NewDatabase(t), pg.NewDatabase(t)
	if a == b {
		t.Fatalf("NewDatabase returned %s twice", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatalf("connect %s: %v", a, err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE only_here (x int); INSERT INTO only_here VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	var x int
	if err := ca.QueryRow(ctx, "SELECT x FROM only_here").Scan(&x); err != nil || x != 7 {
		t.Fatalf("SELECT x = %d, %v; want 7", x, err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatalf("connect %s: %v", b, err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the other database has %d tables only_here (%v); want 0", n, err)
	}
}
