package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSchema: a results file is written with the schema this runall writes, whatever the
// run was read as; one without a schema (written before the field was) reads as schema 1,
// with a skipped task's exit_code -1 as then, and one of a newer schema is refused, saying
// what to do.
func TestSchema(t *testing.T) {
	b, err := json.Marshal(&Run{Schema: 1, RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"schema":2,`) {
		t.Errorf("written as %s, want schema 2 first", b)
	}
	back, err := Parse(b)
	if err != nil || back.Schema != Schema {
		t.Errorf("read back as schema %v (%v), want %d", back, err, Schema)
	}

	v1 := `{"file":"tasks.yml","run_id":"r","status":"ok","tasks":[{"id":0,"name":"a","status":"skipped","exit_code":-1},{"id":1,"name":"b","status":"ok","exit_code":0}]}`
	old, err := Parse([]byte(v1))
	if err != nil {
		t.Fatalf("a schema 1 file: %v", err)
	}
	if old.Schema != 1 || len(old.Tasks) != 2 || old.Tasks[0].ExitCode != -1 || old.Tasks[1].ExitCode != 0 {
		t.Errorf("a schema 1 file read as schema %d, tasks %+v", old.Schema, old.Tasks)
	}

	for _, bad := range []string{`{"schema":3,"tasks":[]}`, `{"schema":-1,"tasks":[]}`} {
		_, err := Parse([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), "reads schemas 1 to 2") {
			t.Errorf("%s: err = %v, want a refusal naming the schemas read", bad, err)
		}
	}
}

// TestMergeSchemas: the shards of a sweep written by runalls of either schema merge into
// one run of this schema.
func TestMergeSchemas(t *testing.T) {
	a, err := Parse([]byte(`{"file":"f.yml","run_id":"a","shard":"0/2","status":"ok","tasks":[{"id":0,"name":"t0","status":"ok","exit_code":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte(`{"schema":2,"file":"f.yml","run_id":"b","shard":"1/2","status":"ok","tasks":[{"id":1,"name":"t1","status":"skipped"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := Merge([]*Run{a, b})
	if m.Schema != Schema || len(m.Tasks) != 2 || m.Tasks[1].ExitCode != -1 {
		t.Errorf("merged: schema %d, tasks %+v", m.Schema, m.Tasks)
	}
}
