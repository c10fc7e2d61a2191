module github.com/tidemark/tidemark

go 1.26

require (
	github.com/klauspost/cpuid/v2 v2.4.2
	github.com/viterin/vek v0.4.3
)

require (
	github.com/chewxy/math32 v1.10.1 // indirect
	github.com/viterin/partial v1.1.0 // indirect
	golang.org/x/exp v0.0.0-20230817173708-d852ddb80c63 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
