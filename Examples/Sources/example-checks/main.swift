// Checks the examples' output, for check-examples.sh:
//     example-checks sweep WAV POINTS   the cutoff sweep shows in the spectrum at its frames
//     example-checks fm WAV             FM sidebands present, fading as the modulator decays
//     example-checks clicks WAV         tones present, no sample-to-sample jump beyond a sine's
//     example-checks audible WAV        sound, no NaN, no clipping
// Prints one line per check; exits 1 when a check fails, 65 when a file cannot be read.
import Foundation

struct Failure: Error { var message: String }

/// The left channel of a 16-bit PCM or 32-bit float WAV file.
func readLeft(_ path: String) throws -> (samples: [Float], sampleRate: Int) {
    guard let data = FileManager.default.contents(atPath: path) else { throw Failure(message: "\(path): cannot read") }
    let bytes = [UInt8](data)
    func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
    func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
    guard bytes.count >= 12, String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF" else { throw Failure(message: "\(path): not a WAV file") }
    var i = 12, format = 0, channels = 0, bits = 0, rate = 0
    while i + 8 <= bytes.count {
        let id = String(decoding: bytes[i..<(i + 4)], as: UTF8.self), size = u32(i + 4)
        if id == "fmt " {
            format = u16(i + 8); channels = u16(i + 10); rate = u32(i + 12); bits = u16(i + 22)
        } else if id == "data" {
            let frameBytes = channels * bits / 8
            let frames = min(size, bytes.count - i - 8) / max(1, frameBytes)
            var out = [Float](repeating: 0, count: frames)
            for f in 0..<frames {
                let p = i + 8 + f * frameBytes
                if format == 3 && bits == 32 {
                    out[f] = Float(bitPattern: UInt32(u32(p)))
                } else if format == 1 && bits == 16 {
                    out[f] = Float(Int16(bitPattern: UInt16(u16(p)))) / 32_768
                } else {
                    throw Failure(message: "\(path): only 16-bit PCM and 32-bit float are read here")
                }
            }
            return (out, rate)
        }
        i += 8 + size + (size & 1)
    }
    throw Failure(message: "\(path): no data chunk")
}

/// Power spectrum of `x` (length a power of two) under a Hann window, by an in-place FFT.
func powerSpectrum(_ x: ArraySlice<Float>) -> [Double] {
    let n = x.count
    var re = x.enumerated().map { Double($0.element) * (0.5 - 0.5 * cos(2 * Double.pi * Double($0.offset) / Double(n))) }
    var im = [Double](repeating: 0, count: n)
    var j = 0
    for i in 1..<n {
        var bit = n >> 1
        while j & bit != 0 { j ^= bit; bit >>= 1 }
        j |= bit
        if i < j { re.swapAt(i, j); im.swapAt(i, j) }
    }
    var length = 2
    while length <= n {
        let angle = -2 * Double.pi / Double(length)
        for start in stride(from: 0, to: n, by: length) {
            for k in 0..<(length / 2) {
                let wr = cos(angle * Double(k)), wi = sin(angle * Double(k))
                let a = start + k, b = a + length / 2
                let tr = re[b] * wr - im[b] * wi, ti = re[b] * wi + im[b] * wr
                re[b] = re[a] - tr; im[b] = im[a] - ti
                re[a] += tr; im[a] += ti
            }
        }
        length <<= 1
    }
    return (0..<(n / 2)).map { re[$0] * re[$0] + im[$0] * im[$0] }
}

/// The frequency below which 99% of the window's spectral energy lies.
func rolloff(_ x: ArraySlice<Float>, sampleRate: Int) -> Double {
    let p = powerSpectrum(x)
    let total = p.reduce(0, +)
    var sum = 0.0
    for (k, v) in p.enumerated() {
        sum += v
        if sum >= 0.99 * total { return Double(k) * Double(sampleRate) / Double(2 * p.count) }
    }
    return Double(sampleRate) / 2
}

func energy(_ p: [Double], at hz: Double, sampleRate: Int) -> Double {
    let bin = Int((hz * Double(2 * p.count) / Double(sampleRate)).rounded())
    return p[max(0, bin - 2)...min(p.count - 1, bin + 2)].reduce(0, +)
}

func check(_ condition: Bool, _ message: String) throws {
    guard condition else { throw Failure(message: "FAIL " + message) }
    print("ok   " + message)
}

func audible(_ x: [Float], _ name: String) throws {
    try check(!x.contains { !$0.isFinite }, "\(name): every sample finite")
    let peak = x.map(abs).max() ?? 0
    try check(peak > 0.01 && peak <= 1, "\(name): audible and unclipped (peak \(peak))")
}

let args = Array(CommandLine.arguments.dropFirst())
do {
    guard args.count >= 2 else { throw Failure(message: "usage: example-checks sweep|fm|clicks|audible WAV [POINTS]") }
    let (x, rate) = try readLeft(args[1])
    try audible(x, args[1])
    switch args[0] {
    case "sweep":
        guard args.count == 3, let text = try? String(contentsOfFile: args[2], encoding: .utf8) else {
            throw Failure(message: "\(args.count == 3 ? args[2] : "POINTS"): cannot read the automation points")
        }
        let points = text.split(separator: "\n").map { $0.split(separator: " ").compactMap { Double($0) } }.filter { $0.count == 2 }
        // Each beat's window starts 2,048 frames in (after the attack), 4,096 frames long.
        guard !points.isEmpty, points.allSatisfy({ $0[0] >= 0 && Int($0[0]) + 6144 <= x.count }) else {
            throw Failure(message: "FAIL sweep: \(args[2]) names no beats, or beats past the end of \(args[1])")
        }
        let measured = points.map { rolloff(x[(Int($0[0]) + 2048)..<(Int($0[0]) + 6144)], sampleRate: rate) }
        print("     cutoff -> 99% rolloff: " + zip(points, measured).map { "\(Int($0[1]))->\(Int($1))" }.joined(separator: " "))
        // Bar by bar (the bass line changes within a bar), the rolloff rises with the cutoff.
        let bars = stride(from: 0, to: measured.count, by: 4).map { measured[$0..<min($0 + 4, measured.count)].reduce(0, +) / 4 }
        try check(zip(bars, bars.dropFirst()).allSatisfy { $0 < $1 }, "sweep: the spectrum brightens bar after bar \(bars.map { Int($0) })")
        try check(measured.last! > 4 * measured.first!, "sweep: the last beat's rolloff is over 4x the first's")
    case "fm":
        // The first note (A3, 220 Hz, ratio 2) rings alone for two seconds: carrier 220 Hz,
        // sidebands at 220 + 440k. Its upper sideband at 660 Hz is strong at the start and
        // weakens as the modulator's envelope falls towards its sustain.
        let early = powerSpectrum(x[2048..<(2048 + 8192)]), late = powerSpectrum(x[70_000..<(70_000 + 8192)])
        let earlyRatio = energy(early, at: 660, sampleRate: rate) / energy(early, at: 220, sampleRate: rate)
        let lateRatio = energy(late, at: 660, sampleRate: rate) / energy(late, at: 220, sampleRate: rate)
        try check(earlyRatio > 0.1, "fm: the 660 Hz sideband is there at the attack (\(earlyRatio) of the carrier)")
        try check(lateRatio < earlyRatio / 4, "fm: and fades as the modulator decays (\(lateRatio))")
    case "clicks":
        var jump: Float = 0
        for i in 1..<x.count { jump = max(jump, abs(x[i] - x[i - 1])) }
        // The loudest tone, 659 Hz at amplitude 0.39, moves at most 2 pi f A / rate per sample.
        let bound = Float(2 * Double.pi * 659.3 * 0.4 / Double(rate)) * 1.02
        try check(jump <= bound, "clicks: largest sample-to-sample jump \(jump) within a sine's \(bound)")
        let tone = x[Int(0.5 * Double(rate))..<Int(0.9 * Double(rate))].map(abs).max()!
        let silence = x[Int(2.2 * Double(rate))...].map(abs).max()!
        try check(tone > 0.3 && silence == 0, "clicks: the tone sounds (\(tone)) and stops to silence")
    case "audible":
        break
    default:
        throw Failure(message: "unknown check \(args[0])")
    }
} catch let failure as Failure {
    print(failure.message)
    exit(failure.message.hasPrefix("FAIL") ? 1 : 65)
}
