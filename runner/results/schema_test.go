package results

import (
	"encoding/json"
	"maps"
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
	if !strings.HasPrefix(string(b), `{"schema":3,`) {
		t.Errorf("written as %s, want schema 3 first", b)
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

	for _, bad := range []string{`{"schema":4,"tasks":[]}`, `{"schema":-1,"tasks":[]}`} {
		_, err := Parse([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), "reads schemas 1 to 3") {
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

// TestSchema3PBTParams (issue 42, point 6): in schema 3 an exploited pbt trial's params are
// the values it ended with and initial_params those it started with; a schema 2 file, whose
// params were the values it started with, reads so too. A schema 3 file reads as written,
// and a trial never exploited keeps its params, with no initial_params.
func TestSchema3PBTParams(t *testing.T) {
	lineage := `"lineage":[{"step":2,"from":"b","value":0.1,"params":{"lr":"0.08","seed":"1"}},{"step":4,"from":"c","value":0.2,"params":{"lr":"0.1","seed":"1"}}]`
	v2 := `{"schema":2,"tasks":[{"id":0,"name":"a","status":"ok","params":{"lr":"0.001","seed":"1"},` + lineage + `},` +
		`{"id":1,"name":"b","status":"ok","params":{"lr":"0.1","seed":"2"}}]}`
	v3 := `{"schema":3,"tasks":[{"id":0,"name":"a","status":"ok","params":{"lr":"0.1","seed":"1"},"initial_params":{"lr":"0.001","seed":"1"},` + lineage + `}]}`
	for name, file := range map[string]string{"schema 2": v2, "schema 3": v3} {
		res, err := Parse([]byte(file))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a := res.Tasks[0]
		if !maps.Equal(a.Params, map[string]string{"lr": "0.1", "seed": "1"}) || !maps.Equal(a.InitialParams, map[string]string{"lr": "0.001", "seed": "1"}) {
			t.Errorf("%s: a's params %v, initial %v; want the last exploit's lr 0.1, and 0.001 as it started", name, a.Params, a.InitialParams)
		}
		if res.Schema == 2 {
			if b := res.Tasks[1]; b.Params["lr"] != "0.1" || b.InitialParams != nil {
				t.Errorf("%s: b, never exploited: params %v, initial %v; want its own, none initial", name, b.Params, b.InitialParams)
			}
		}
	}
}
