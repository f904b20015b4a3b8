// Package ttyin discards what was typed on a terminal and not read yet.
//
// A question that asks for consent (open this page in your browser?)
// must be answered by what the person types after they saw it: a "y"
// typed twice for the question before, or typed ahead while the screen
// still showed something else, is not consent to this one. sudo discards
// type-ahead before it asks for a password for the same reason.
package ttyin

import "os"

// Discard drops the input the terminal f holds that no read has taken
// yet: whole lines typed ahead, and the line being typed. It does nothing
// (and reports no error) where the system has no way to do it.
func Discard(f *os.File) error { return discard(f) }
