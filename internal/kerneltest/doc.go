// Package kerneltest holds the decompositions the tests run the kernel
// families in beyond their defaults and tuner candidates (RollingChecks,
// WindowChecks, BankGroupChecks, SepRingChecks, Sep3Checks,
// SepTileChecks): small tiles, short chunks and segments, so that the
// tests' small problems cross every boundary a kernel has. kernels' own
// emulations and the backends' device tests share them. It sees the
// kernels only through their exported builders: a decomposition is
// listed where the builder honours it. It is imported only by tests.
package kerneltest
