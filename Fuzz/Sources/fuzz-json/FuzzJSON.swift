import Foundation
import MIDIFile

/// Any text given to `tactus build`: it is refused with an error, or it becomes a file whose
/// dump builds back to the same file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    guard let file = try? JSONImport.file(from: input) else { return 0 }
    let document = FileDump.document(of: file, fullBytes: true)
    guard let again = try? JSONImport.file(from: Data(document.canonicalText().utf8)) else {
        fatalError("the dump of a built file does not build")
    }
    if FileDump.document(of: again, fullBytes: true) != document { fatalError("build(dump(x)) differs from x") }
    return 0
}
