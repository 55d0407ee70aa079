// Package report owns what a chaos run leaves behind: the matrix (one Cell
// per cell, reports/matrix.json) and the evidence bundle of a cell that did
// not come out as expected (reports/evidence/<cell>/). Reading, writing and
// rendering live in separate files (read.go, write.go, text.go) so more
// renderers (JUnit, HTML, markdown) and shard merging can sit beside them.
package report
