module github.com/ndconv/ndconv

go 1.26
