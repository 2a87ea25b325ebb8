/// glibc's mallopt (<malloc.h>, which Swift's Glibc module leaves out) and its
/// M_MMAP_THRESHOLD parameter.
@_silgen_name("mallopt") func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
let glibcMmapThreshold: Int32 = -3
