package gpucache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
)

// Key names one compilation: the SHA-256 of everything its artifact
// depends on.
type Key [sha256.Size]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// KeyBuilder hashes a Key's inputs, each as a field
//
//	<tag> <length of value in bytes>\n<value>\n
//
// so that no two different lists of inputs hash the same bytes.
type KeyBuilder struct{ h hash.Hash }

// NewKey starts a key with the field ("format", format). The format names
// the backend, the key's inputs and the file layout: change it when any of
// them changes, and old files are simply never found again.
func NewKey(format string) *KeyBuilder {
	b := &KeyBuilder{h: sha256.New()}
	b.Field("format", format)
	return b
}

// Field adds one input to the key.
func (b *KeyBuilder) Field(tag, value string) {
	fmt.Fprintf(b.h, "%s %d\n%s\n", tag, len(value), value)
}

// Key returns the key of the fields added so far.
func (b *KeyBuilder) Key() Key {
	var k Key
	b.h.Sum(k[:0])
	return k
}
