package maelstrom

import (
	"bytes"
	"testing"
)

// fastParseLines are lines the fast path must take (the node's traffic)
// or must leave to encoding/json (a case outside its subset); the fuzz
// test starts from all of them.
var fastParseLines = []struct {
	line string
	fast bool
}{
	{`{"id":26,"src":"c1","dest":"n1","body":{"type":"lease_grant","chunk_handle":"ch_001","server":"cs1","lease_ms":900,"msg_id":2}}` + "\n", true},
	{`{"id":7,"src":"n2","dest":"n1","body":{"type":"prepare_ok","in_reply_to":7,"chunk_handle":"ch_8","ballot":{"counter":229815450777729,"incarnation":1795433209043835},"ok":true,"promised":{"counter":0,"incarnation":0},"lease":null,"msg_id":3}}`, true},
	{`{"src":"c1","dest":"n1","body":{"type":"echo","echo":"caf\u00e9 \"q\" é","msg_id":1,"xs":[1,-2.5e+3,true,false,null,[],{}]}}`, true},
	{"  {\"src\" : \"c1\" , \"dest\":\"n1\",\"body\":{ \"type\" : \"echo\" , \"msg_id\" : 12 } }\r\n", true},
	{`{"body":{"msg_id":2,"type":"read"},"dest":"n1","src":"c3"}`, true},
	{`{"src":"c1","dest":"n1","body":{}}`, true},
	{`{"src":"c1","dest":"n1","body":{"type":5,"msg_id":1}}`, false},                         // type not a string
	{`{"src":"c1","dest":"n1","body":{"type":"e\u0063ho"}}`, false},                          // escaped type
	{`{"src":"c1","dest":"n1","body":{"Type":"echo","msg_id":1}}`, false},                    // folds onto type
	{`{"SRC":"c1","dest":"n1","body":{"type":"echo"}}`, false},                               // folds onto src
	{`{"src":"c1","src":"c2","dest":"n1","body":{"type":"echo"}}`, false},                    // duplicate key
	{`{"src":"c1","dest":"n1","body":{"msg_id":1,"msg_id":2}}`, false},                       // duplicate reserved field
	{`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":1.0}}`, false},                  // not an integer: an error
	{`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":"1"}}`, false},                  // not an integer: an error
	{`{"src":"","dest":"n1","body":{}}`, false},                                              // empty src: an error
	{`{"src":"c1","dest":"n1","body":null}`, false},                                          // body not an object
	{`{"src":"c1","dest":"n1","body":{"type":"echo"}} {}`, false},                            // trailing value
	{`{"src":"c1","dest":"n1","body":{"type":"echo","n":01}}`, false},                        // leading zero
	{`{"src":"c1","dest":"n1","body":{"type":"echo","s":"tab	in"}}`, false},                  // control character
	{`{"src":"c1","dest":"n1","body":{"type":"echo"`, false},                                 // incomplete
	{`{"src":"c1","dest":"n1","body":{"type":"echo","x":[1,]}}`, false},                      // trailing comma
	{`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":99999999999999999999}}`, false}, // overflows int64
}

func TestFastParseTakesTheCommonLines(t *testing.T) {
	for _, tc := range fastParseLines {
		if _, ok := fastParse([]byte(tc.line)); ok != tc.fast {
			t.Errorf("fastParse(%s) ok = %v, want %v", tc.line, ok, tc.fast)
		}
	}
}

// FuzzParseMessageFastPath: whenever the fast path accepts a line,
// encoding/json accepts it too and decodes the same message.
//
//	go test ./maelstrom -run '^$' -fuzz FuzzParseMessageFastPath
func FuzzParseMessageFastPath(f *testing.F) {
	for _, tc := range fastParseLines {
		f.Add([]byte(tc.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := fastParse(line)
		if !ok {
			return
		}
		std, err := parseMessageStd(line)
		if err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refuses it: %v", line, err)
		}
		if fast.Src != std.Src || fast.Dest != std.Dest || !bytes.Equal(fast.Body, std.Body) || fast.Type != std.Type ||
			fast.MsgID != std.MsgID || fast.HasMsgID != std.HasMsgID || fast.InReplyTo != std.InReplyTo || fast.HasInReplyTo != std.HasInReplyTo {
			t.Fatalf("line %q:\nfast %+v\nstd  %+v", line, fast, std)
		}
	})
}
