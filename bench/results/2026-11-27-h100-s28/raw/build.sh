#!/bin/bash
# Build session 28's final device call: A = bfe5f75 (main at the start), B = this tree.
set -eu
cd /work/main
W=.gpu/final28
rm -rf $W/bin && mkdir -p $W/bin
export GOFLAGS="-tags=ndconv_nogcs,ndconv_noazure -ldflags=-s"
bash scripts/ab-gpu.sh build bfe5f75 . 
cp .gpu/ab/ndconv-A .gpu/ab/ndconv-B .gpu/ab/labels.txt $W/bin/
export CGO_ENABLED=0
go test -c -o $W/bin/gpu.test ./internal/gpu
go test -c -o $W/bin/ndconv.test .
go test -c -o $W/bin/cuda.test ./cuda
go test -c -o $W/bin/opencl.test ./opencl
go test -c -o $W/bin/plan.test ./plan
go test -c -o $W/bin/bench.test ./bench
gzip -f $W/bin/*
ls -la $W/bin; du -sh $W
