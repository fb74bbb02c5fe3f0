package signature

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"testing"
)

// referenceTimestamp is a slow, obviously correct reading of the top-level
// "timestamp" member with encoding/json's tokenizer. The fast scanner in timestamp
// must agree with it on every input.
func referenceTimestamp(body []byte) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, false
	}
	var (
		ms    int64
		found bool
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, false
		}
		if tok != "timestamp" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0, false
			}
			continue
		}
		if found {
			return 0, false
		}
		found = true
		tok, err = dec.Token()
		num, ok := tok.(json.Number)
		if err != nil || !ok {
			return 0, false
		}
		if ms, err = strconv.ParseInt(num.String(), 10, 64); err != nil {
			return 0, false
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return 0, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, false
	}
	return ms, found
}

var timestampCases = []string{
	`{"timestamp":1767225600000}`,
	` { "a" : [1, {"timestamp": 2}, "x\"}"], "timestamp" : -5 } `,
	`{"time\u0073tamp":42}`,
	`{"timestamp\u0000":42}`,
	`{"Timestamp":42}`,
	`{"timestamp":1.0}`,
	`{"timestamp":1e3}`,
	`{"timestamp":-0}`,
	`{"timestamp":"1"}`,
	`{"timestamp":null}`,
	`{"timestamp":[1]}`,
	`{"timestamp":1,"timestamp":1}`,
	`{"timestamp":9223372036854775807}`,
	`{"timestamp":9223372036854775808}`,
	`{"a":"\\","timestamp":7}`,
	`{"a":{"b":{"c":[[],{}]}},"timestamp":7,"d":true,"e":false,"f":null}`,
	`{}`,
	`[]`,
	`{"timestamp":1}{}`,
	`{"timestamp":1`,
	"{\"timestamp\":1}\n",
	"",
	" ",
}

// Rule AUTH-4
func TestTimestampMatchesReference(t *testing.T) {
	t.Parallel()
	for _, c := range timestampCases {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			checkAgainstReference(t, []byte(c))
		})
	}
}

func checkAgainstReference(t *testing.T, body []byte) {
	t.Helper()
	wantMs, wantOK := referenceTimestamp(body)
	gotMs, err := Timestamp(body)
	if gotOK := err == nil; gotOK != wantOK || gotMs != wantMs {
		t.Fatalf("Timestamp(%q) = %d, %v; reference = %d, %v", body, gotMs, err, wantMs, wantOK)
	}
}

// FuzzTimestamp checks the allocation-free scanner against encoding/json's
// tokenizer on arbitrary bytes.
func FuzzTimestamp(f *testing.F) {
	for _, c := range timestampCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAgainstReference(t, body)
	})
}
