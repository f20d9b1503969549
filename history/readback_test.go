package history

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadBackNamesTheBadLine: a defect met on the way is ReadHistory's
// error, with its line number, from either pass.
func TestReadBackNamesTheBadLine(t *testing.T) {
	ops := []Op{{Type: Invoke, F: "echo", Value: []byte(`"hi"`)}, {Time: 1, Type: OK, F: "echo", Value: []byte(`"hi"`)}}
	for _, bad := range []string{`{"index":9,"time":1,"process":0,"type":"ok","f":"echo"}`,
		`{"index":2,"time":1,"process":"nemesis","type":"nope","f":"kill"}`} {
		var b bytes.Buffer
		if err := WriteHistory(&b, ops); err != nil {
			t.Fatal(err)
		}
		b.WriteString(bad + "\n")
		path := filepath.Join(t.TempDir(), "jsonl")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		_, want := ReadHistory(bytes.NewReader(b.Bytes()))
		_, err := ReadBack(path, func([]Op) ([]PairSink, error) { return nil, nil })
		if err == nil || want == nil || err.Error() != want.Error() || !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%s: ReadBack error %v, ReadHistory's %v", bad, err, want)
		}
	}
}
