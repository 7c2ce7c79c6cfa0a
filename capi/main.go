package main

// main is empty: the package is built as a shared library (see doc.go).
func main() {}
