// An SVG file that cannot be written is an error on the module.
// RUN: nvfp4-opt %s --nvfp4-print-precision-report=svg-file=%t.missing/chart.svg \
// RUN:   -verify-diagnostics -o /dev/null

// expected-error @+1 {{nvfp4-print-precision-report: cannot write '}}
module {
}
