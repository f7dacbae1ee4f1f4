//===- Passes.td - nvfp4 report passes ---------------------*- tablegen -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_REPORT_PASSES_TD
#define NVFP4_REPORT_PASSES_TD

include "mlir/Pass/PassBase.td"

def NVFP4PrintPrecisionReport
    : Pass<"nvfp4-print-precision-report", "ModuleOp"> {
  let summary = "Print the per-layer and per-GEMM precision report";
  let description = [{
    Prints, to standard error (or `output-file`), what every GEMM of the
    module runs in: its
    layer, kind, role, precision, the recipe of each NVFP4 operand (block
    shape, RHT, rounding), its FLOPs (2 * batch * M * N * K), and the share of
    GEMM FLOPs in NVFP4 per layer and overall. Run it after
    `nvfp4-assign-precision`, before or after `nvfp4-apply-recipe` (GEMMs not
    yet rewritten are shown with the recipe they will get). The module is
    not changed.

    The report never shares standard output with the IR nvfp4-opt prints:
    it goes to standard error unless `output-file` names a file (`-` is
    standard output, for use with `-o`). With `json` the report is printed
    as JSON instead of a table; with
    `svg-file` an SVG bar chart of the NVFP4 FLOP share per layer is
    written to that file. This is the report `nvfp4-compile --report` writes.
    The chart draws at most 120 bars for numbered layers: a deeper model
    gets one bar per run of ceil(layers / 120) consecutive layers (FLOPs
    summed, the run named in the bar's tooltip), plus one bar for the GEMMs
    without a layer.

    Example:

    ```
    nvfp4-opt examples/llama_block.mlir --nvfp4-assign-precision \
        --nvfp4-print-precision-report='svg-file=share.svg' -o /dev/null
    ```

    prints, on standard error (one block: the default policy keeps no block
    in BF16 by position, the attention BMMs stay BF16 by kind),

    ```
    NVFP4 precision report: 9 GEMMs, 7 in NVFP4
    GEMM FLOPs: 56103010304 total, 55834574848 in NVFP4 (99.52%)

    Per layer:
     layer  gemms  nvfp4                 flops           nvfp4 flops     share
         0      9      7           56103010304           55834574848    99.52%
    ...
    ```
  }];
  let options = [
    Option<"json", "json", "bool", /*default=*/"false",
           "Print JSON instead of a table">,
    Option<"svgFile", "svg-file", "std::string", /*default=*/"\"\"",
           "Also write the SVG chart of the NVFP4 FLOP share per layer here">,
    Option<"outputFile", "output-file", "std::string", /*default=*/"\"\"",
           "Write the report to this file ('-': standard output) instead of "
           "standard error">,
  ];
}

#endif // NVFP4_REPORT_PASSES_TD
