#!/usr/bin/env bash
# The suites that do not need the VM, under ThreadSanitizer and then AddressSanitizer
# (separate build folders). Every thread of record runs here: capture threads, the encoder
# thread, failover swapping a running source's callback, live audio. A report fails the
# run: the test process exits non-zero, and so does a dualcam a test starts. Reports go to
# files, printed at the end: one from a dualcam whose stderr a test had closed (the hang-up
# test) was lost, as the sanitizer dies when it cannot write its report.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/stage-times.sh
export DUALCAM_SANITIZED=1
# As in test.sh: a test's time limit starts when it has a thread to run on.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(nproc)
# Real-time tests run alone, as in test.sh; instrumented code is several times slower, so
# only the record tests whose assertions do not depend on keeping up at 1080p run here.
threaded='RecordTests/(durationIsKeptToTheFrame|sigusr1SwapsThePicturesMidRecording|oneSourceRecordsAloneAndSaysSo|mjpegFilesArePlayedThroughTheCameraPath)|CrashSafetyTests/(sighupWithTheTerminalGoneFinishesTheFile|noPictureAtAllIsAnErrorAndNoFile)'
# ThreadSanitizer looks for data races, so it leaves out the suites that run one thread
# only (the pixel kernels against their references, layout arithmetic) and the end-to-end
# suites whose compositions take the same threaded paths as ComposeTests (content, sync,
# errors): under it they were the slowest part of CI, 9 of its minutes. AddressSanitizer
# runs the kernels and the content and error suites. Neither repeats the file-level tests
# of options and output (styled inset, terminal, output choices, sync timelines), whose
# paths the compose tests cover.
# The styled inset's and the paths' kernel checks (every corner, place and size against the
# scalar reference) are single-threaded too; threadedSIMDMatchesScalarReference runs the
# same kernels on threads. With the ComposeTests below, leaving them out took this stage's
# tests from 689 s to 201 s (2 cores, 2026-11-29).
single_threaded='DecodeScaleTests|FilterTableTests|FilterRatioPropertyTests|ResampleTests|ColorTests|RotationTests|LayoutTests|CropTests|SIMDExactnessTests|ColorSIMDTests|Lanes16Tests|CameraFormatTests|JPEGRangeTests|ToneMapTests|TenBitNarrowingTests|FormatNegotiationTests|StyledInsetTests|CompositorPathsTests/(sideBySideSIMDMatchesScalarReference|anInsetPictureNeedsOnlyTheColumnsItsPlanReads)'
# ComposeTests' 1080p compositions each take a minute instrumented, on the same threads
# (decoders ahead, compositor bands, the encode stage, the sound path): the 960x540
# side-by-side with its swaps and the in-place 1080p one run, ComposeEngineTests drive the
# engine itself, and the file-level checks of the rest stay with the plain and address runs.
same_threads_as_compose='ContentTests|ErrorTests|MistakeTests|HDRTests|ComposeTests/(namesWithColons|outputIsHEVC|durationFollows|creationTime|locationAndUpright|insetShowsFront|swapAtExchanges|rotatedClip)'
for sanitizer in thread address; do
  scratch=.build-$sanitizer
  # AddressSanitizer's build is the AVX2 one (DUALCAM_X86_64_LEVEL=v3): every kernel of that
  # build is checked against its scalar reference, with its bounds checked too, and CI builds
  # the package once less. The default build's kernels are the plain suite's and bench.sh's.
  if [ "$sanitizer" = address ]; then
    if grep -qw avx2 /proc/cpuinfo; then
      export DUALCAM_X86_64_LEVEL=v3
    else
      echo "sanitizers: NOT RUN: the AVX2 build's kernels (this CPU has no AVX2)"
      [ "${DUALCAM_REQUIRE_ALL:-0}" = 1 ] && exit 1
    fi
  fi
  echo "sanitizers: building with --sanitize=$sanitizer${DUALCAM_X86_64_LEVEL:+, x86-64-$DUALCAM_X86_64_LEVEL}"
  swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
  lap "$sanitizer: build"
  reports="$PWD/$scratch/sanitizer-reports"
  rm -rf "$reports" && mkdir -p "$reports"
  trap 'for f in "$reports"/*; do [ -f "$f" ] && { echo "sanitizers: report $f:"; cat "$f"; }; done; print_stage_times sanitizers' EXIT
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 log_path=$reports/report"
  export ASAN_OPTIONS="detect_leaks=0 log_path=$reports/report"
  # BenchGateTests runs dualcam under valgrind, which cannot run a sanitizer's build: on the
  # ThreadSanitizer one valgrind 3.19 gave up reading its debug information ("unhandled
  # dwarf2 abbrev form code 0x23 ... I can't recover"), which failed two CI runs; and it
  # preloads the allocation counter, a second malloc beside the sanitizer's own. The gate is
  # tested on the plain debug build (test.sh) and run on the release one (bench.sh). The same
  # holds for CommandLineTests (it counts one bench case under callgrind to check that
  # JSON) and the README's recipes (the CI gate's, and real-time recordings).
  # LimitsTests' huge picture is judged by the peak memory of the dualcam refusing it, which a
  # sanitizer's shadow memory and allocator change; its sound half runs here.
  # BatchTests: batch is one thread waiting on child processes, and each row is a `dualcam
  # compose` of its own, whose threads ComposeTests run here; instrumented, their 40-odd
  # compositions (2-3 minutes each test in the plain suite beside the rest) would only meet
  # the suite's limit. The manifest's unit tests (BatchManifestTests) run.
  skip='RecordTests|VividTests|CrashSafetyTests|PreviewTests|StyledInsetFileTests|TerminalTests|OutputChoicesTests|SyncTests|BenchGateTests|CommandLineTests|ReadmeRecipeTests|LimitsTests/aHugePictureIsRefusedWithoutDecodingIt|BatchTests'
  [ "$sanitizer" = thread ] && skip="$skip|$single_threaded|$same_threads_as_compose"
  # MistakeTests start records, relayouts and compositions of their own: under
  # AddressSanitizer, beside the rest in parallel, they held both cores long enough that
  # SoundCutsTests' one-minute limit ran out before its first instruction (a local CI). They
  # run after the rest, one at a time.
  [ "$sanitizer" = address ] && skip="$skip|MistakeTests"
  swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --skip "$skip"
  [ "$sanitizer" = address ] && swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --no-parallel --filter MistakeTests
  # The live stream's threads (its writer, its reconnection, its drops) under ThreadSanitizer
  # too: a race there (the stop flag FFmpeg polls) showed only when a stream ran under it.
  filter=$threaded
  [ "$sanitizer" = thread ] && filter="$filter|RecordTests/aStreamWhoseServerGoesAwayReconnectsAndTheFileIsWhole"
  swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --no-parallel --filter "$filter"
  lap "$sanitizer: tests"
  if [ "${DUALCAM_X86_64_LEVEL:-}" = v3 ]; then
    "$scratch/debug/dualcam" bench --verify
    echo "sanitizers: the AVX2 build's kernels exact"
  fi
  # A report from a dualcam whose test did not look at its exit status fails the run too.
  if [ -n "$(ls -A "$reports")" ]; then echo "sanitizers: $sanitizer reported (the reports follow)"; exit 1; fi
done
echo "sanitizers: thread and address clean"
