// tactus-soak: plays a long song under stress and checks that no event was lost or repeated.
//
//   tactus-soak [--seconds S] [--speed X | --flat-out] [--device PCM] [--seed N] [--block N]
//
// Offline (the default) a render thread of its own renders at X times real time (100 by
// default); with --device an ALSA PCM device paces the run at real time and its underruns
// count. Exit status 0 when the run passed, 1 when it did not, 2 on bad usage or setup.
// TACTUS_SOAK_TRACE=1 prints every transport action and every jump the checker explains.
import ALSA
import AudioGraph
import Foundation
import PlaybackSoak

/// The PCM driver as a soak render driver.
final class DeviceSoakDriver: SoakRenderDriver, PCMRenderSource, @unchecked Sendable {
    private let output: PCMOutput
    private var render: (@Sendable (Int, StereoBuffer, Int64) -> Void)?
    private let blockSize: Int

    init(device: String, sampleRate: Int, blockSize: Int) throws {
        output = try PCMOutput(PCMConfiguration(device: device, sampleRate: sampleRate, periodFrames: blockSize,
                                                bufferFrames: blockSize * 8, format: .s16))
        self.blockSize = blockSize
    }

    var renderedFrames: Int64 { output.framesWritten }
    var xrunCount: Int { output.xrunCount }

    func start(render: @escaping @Sendable (Int, StereoBuffer, Int64) -> Void) throws {
        self.render = render
        try output.start(source: self)
    }

    func stop() { output.stop() }

    func renderPCM(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        var done = 0
        while done < frameCount {
            let n = min(blockSize, frameCount - done)
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            render?(n, StereoBuffer(left: left + done, right: right + done), Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
            done += n
        }
    }
}

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tactus-soak: \(message)\nusage: tactus-soak [--seconds S] [--speed X | --flat-out] [--device PCM] [--seed N] [--block N]\n".utf8))
    exit(2)
}

var configuration = SoakConfiguration()
var device: String?
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    func value() -> String {
        guard let v = arguments.popFirst() else { usage("\(flag) needs a value") }
        return v
    }
    func number<T: LosslessStringConvertible>(_: T.Type) -> T {
        guard let n = T(value()) else { usage("\(flag) takes a number") }
        return n
    }
    switch flag {
    case "--seconds": configuration.outputSeconds = number(Double.self)
    case "--speed": configuration.speed = number(Double.self)
    case "--flat-out": configuration.speed = nil
    case "--device": device = value()
    case "--seed": configuration.seed = number(UInt64.self)
    case "--block": configuration.blockSize = number(Int.self)
    default: usage("unknown option \(flag)")
    }
}
guard configuration.outputSeconds > 0, configuration.blockSize > 0, configuration.speed.map({ $0 > 0 }) ?? true else {
    usage("--seconds, --speed and --block must be positive")
}

do {
    let run = try SoakRun(configuration: configuration)
    let driver: SoakRenderDriver
    if let device {
        driver = try DeviceSoakDriver(device: device, sampleRate: configuration.sampleRate, blockSize: configuration.blockSize)
        print("soak: \(configuration.outputSeconds) s at real time on '\(device)', block \(configuration.blockSize), seed \(configuration.seed)")
    } else {
        driver = OfflineSoakDriver(blockSize: configuration.blockSize, sampleRate: configuration.sampleRate, speed: configuration.speed)
        let pace = configuration.speed.map { "\($0)x real time" } ?? "flat out"
        print("soak: \(configuration.outputSeconds) s offline at \(pace), block \(configuration.blockSize), seed \(configuration.seed)")
    }
    let report = try run.run(driver: driver)
    print(report)
    exit(report.passed ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("tactus-soak: \(error)\n".utf8))
    exit(2)
}
