package gpucache

import (
	"crypto/sha256"
	"testing"
)

// TestKeyLayout: a key is the SHA-256 of its fields exactly as documented,
// the format first.
func TestKeyLayout(t *testing.T) {
	b := NewKey("fmt-1")
	b.Field("arch", "sm_90")
	b.Field("source", "héllo")
	want := sha256.Sum256([]byte("format 5\nfmt-1\narch 5\nsm_90\nsource 6\nhéllo\n"))
	if got := b.Key(); got != Key(want) {
		t.Errorf("key %s, want %x", got, want)
	}
	if got := NewKey("fmt-1").Key(); got != Key(sha256.Sum256([]byte("format 5\nfmt-1\n"))) {
		t.Errorf("format-only key %s", got)
	}
}

// TestKeyFieldsAreDelimited: the same bytes split differently between
// fields, or under other tags, or in another format, are other keys.
func TestKeyFieldsAreDelimited(t *testing.T) {
	key := func(format string, fields ...string) Key {
		b := NewKey(format)
		for i := 0; i < len(fields); i += 2 {
			b.Field(fields[i], fields[i+1])
		}
		return b.Key()
	}
	base := key("f", "option", "-DA=1", "option", "-DB=2", "source", "x")
	for name, k := range map[string]Key{
		"joined":  key("f", "option", "-DA=1-DB=2", "source", "x"),
		"moved":   key("f", "option", "-DA=1", "option", "-DB=2\nsource 1\nx", "source", ""),
		"tag":     key("f", "options", "-DA=1", "option", "-DB=2", "source", "x"),
		"format":  key("g", "option", "-DA=1", "option", "-DB=2", "source", "x"),
		"missing": key("f", "option", "-DA=1", "source", "x"),
	} {
		if k == base {
			t.Errorf("%s: same key", name)
		}
	}
	if key("f", "option", "-DA=1", "option", "-DB=2", "source", "x") != base {
		t.Error("the same fields hash to another key")
	}
	if len(base.String()) != 64 {
		t.Errorf("String() = %q, want 64 hex digits", base.String())
	}
}
