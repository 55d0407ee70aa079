// Package headertest tests logjam.hpp (calibrate/include/logjam) as itself:
// cpp/header_test.cpp, a GoogleTest suite that plays each rule of the header
// against real file descriptors, is built and run by header_test.go with
// `go test` (./logjam test). docs/SINK.md lists each rule with the model
// test and the header test that pin it.
package headertest
