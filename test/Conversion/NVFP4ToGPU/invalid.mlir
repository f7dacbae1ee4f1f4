// RUN: nvfp4-opt %s --convert-nvfp4-to-gpu=chip=sm_75 -split-input-file -verify-diagnostics

// expected-error @+1 {{unsupported chip 'sm_75' (supported: sm_90a, sm_100a, sm_103a, sm_120a)}}
module {
  func.func @f(%x: tensor<16x32xbf16>) -> f32 {
    %a = nvfp4.amax %x : tensor<16x32xbf16>
    return %a : f32
  }
}
