package harness

import (
	"bytes"
	"testing"
)

func TestConsoleProgressLine(t *testing.T) {
	var b bytes.Buffer
	c := &console{w: &b, live: true}
	c.setProgress("1s")
	c.println("WARN x")
	c.setProgress("2s")
	c.endProgress()
	want := "1s" + "\r\033[K" + "WARN x\n" + "1s" + "\r\033[K" + "2s" + "\r\033[K"
	if b.String() != want {
		t.Errorf("terminal output %q, want %q", b.String(), want)
	}
}

func TestConsoleWithoutTerminal(t *testing.T) {
	var b bytes.Buffer
	c := newConsole(&b) // not a terminal: no progress line at all
	c.setProgress("1s")
	c.println("WARN x")
	c.endProgress()
	if b.String() != "WARN x\n" {
		t.Errorf("output %q, want only the warning", b.String())
	}
}
