import Dispatch
import Locking
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A decoded SoundFont 3 sample: its 16-bit points, and its loop points relative to them.
///
/// The memory belongs to the ``SoundFontCompressedSamples`` that decoded it and lives as long
/// as the bank: the audio thread may keep reading it.
public struct DecodedSample: @unchecked Sendable {
    /// The points.
    public let points: UnsafePointer<Int16>
    /// How many points there are.
    public let count: Int
    /// First point of the loop, inside `0...count`.
    public let loopStart: Int
    /// First point after the loop, inside `loopStart...count`.
    public let loopEnd: Int

    /// The points as a buffer.
    public var buffer: UnsafeBufferPointer<Int16> { UnsafeBufferPointer(start: points, count: count) }
}

/// The Ogg Vorbis compressed samples of a SoundFont 3 bank, decoded on request and cached per
/// sample.
///
/// Opening a bank decodes nothing. A player asks for the samples of the presets it will play
/// (``decode(_:)``, on any thread but the audio thread; batches run in parallel on the
/// machine's cores), and the audio thread finds a decoded sample with ``decoded(_:)``, which
/// neither locks nor allocates: until its sample is decoded a note is silent. Decoded points
/// stay until the bank goes away. A stream that does not decode makes its sample silent and
/// becomes one warning.
public final class SoundFontCompressedSamples: @unchecked Sendable {
    /// Header in front of each decoded sample's points: count, loop start, loop end.
    private static let headerBytes = 32
    /// Slot states besides a header's address.
    private static let notDecoded: UInt = 0, failed: UInt = 1

    /// Samples the bank has (compressed or not); indices are ``SoundFontBank/samples``'.
    public let sampleCount: Int
    /// How many samples are compressed.
    public let compressedCount: Int
    /// Bytes of compressed data the compressed samples span in `smpl`.
    public let compressedByteCount: Int

    private let data: UnsafeRawBufferPointer
    private let owner: AnyObject
    /// Byte range in `data` of each compressed sample's stream; empty for the others.
    private let ranges: [Range<Int>]
    private let loops: [(start: Int, end: Int)]
    private let names: [String]
    private let maximumFrameCount: Int
    private let threadCount: Int
    private let slots: UnsafeMutablePointer<Atomic<UInt>>
    /// Serialises decoding batches (so a sample is decoded once) and keeps the total.
    private let batch = Locked<Int>(0)

    /// - Parameters:
    ///   - data: the `smpl` chunk's bytes, which `owner` keeps alive.
    ///   - samples: the bank's sample headers; compressed ones hold byte offsets into `data`
    ///     as start and end, and loop points relative to the decoded sample.
    ///   - maximumFrameCount: the most points one sample decodes to.
    ///   - threadCount: threads decoding at once; nil for one per core.
    init(data: UnsafeRawBufferPointer, owner: AnyObject, samples: [SoundFontSample], maximumFrameCount: Int, threadCount: Int?) {
        self.data = data
        self.threadCount = max(1, threadCount ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        self.maximumFrameCount = max(1, maximumFrameCount)
        self.owner = owner
        sampleCount = samples.count
        var ranges: [Range<Int>] = []
        var bytes = 0, count = 0
        for s in samples {
            if s.isCompressed, s.start < s.end, s.end <= data.count {
                ranges.append(s.start..<s.end)
                bytes += s.end - s.start
                count += 1
            } else {
                ranges.append(0..<0)
            }
        }
        self.ranges = ranges
        compressedCount = count
        compressedByteCount = bytes
        loops = samples.map { ($0.loopStart, $0.loopEnd) }
        names = samples.map(\.name)
        slots = .allocate(capacity: max(1, samples.count))
        for i in 0..<max(1, samples.count) { (slots + i).initialize(to: Atomic(Self.notDecoded)) }
    }

    deinit {
        for i in 0..<sampleCount {
            let state = slots[i].load(ordering: .acquiring)
            if state > Self.failed { UnsafeMutableRawPointer(bitPattern: state)?.deallocate() }
        }
        slots.deinitialize(count: max(1, sampleCount))
        slots.deallocate()
    }

    /// True when sample `index` is an Ogg Vorbis stream (decoded or not).
    public func isCompressed(_ index: Int) -> Bool {
        index >= 0 && index < sampleCount && !ranges[index].isEmpty
    }

    /// The decoded sample `index`, or nil while it is not decoded (or is not compressed, or
    /// failed to decode). Safe on the audio thread: one atomic load, no lock, no allocation.
    @inline(__always)
    public func decoded(_ index: Int) -> DecodedSample? {
        guard index >= 0, index < sampleCount else { return nil }
        let state = slots[index].load(ordering: .acquiring)
        guard state > Self.failed, let header = UnsafeRawPointer(bitPattern: state) else { return nil }
        return DecodedSample(points: (header + Self.headerBytes).assumingMemoryBound(to: Int16.self),
                             count: header.load(fromByteOffset: 0, as: Int.self),
                             loopStart: header.load(fromByteOffset: 8, as: Int.self),
                             loopEnd: header.load(fromByteOffset: 16, as: Int.self))
    }

    /// Bytes of decoded points held so far.
    public var decodedByteCount: Int { batch.withLock { $0 } }

    /// Decodes the compressed samples among `indices` that are not decoded yet, in parallel,
    /// and publishes each as it completes. Returns one warning per sample that failed to
    /// decode (it stays silent; it is not tried again). Never call it on the audio thread.
    /// - Throws: ``SoundFontErrorReason/libraryUnavailable(library:package:detail:)`` when
    ///   libvorbisfile cannot be loaded and something needs decoding.
    public func decode(_ indices: some Sequence<Int>) throws(SoundFontError) -> [SoundFontWarning] {
        var seen = Set<Int>()
        let wanted = indices.filter { isCompressed($0) && seen.insert($0).inserted }
        guard !wanted.isEmpty else { return [] }
        let result: Result<[SoundFontWarning], SoundFontError> = batch.withLock { total in
            let pending = wanted.filter { slots[$0].load(ordering: .acquiring) == Self.notDecoded }
            guard !pending.isEmpty else { return .success([]) }
            do throws(SoundFontError) {
                try VorbisDecoder.loadLibrary()
            } catch {
                return .failure(error)
            }
            let results = BatchResults(count: pending.count)
            let next = Atomic<Int>(0)
            let work: @Sendable (Int) -> Void = { _ in
                while true {
                    let n = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard n < pending.count else { return }
                    switch self.decodeOne(pending[n]) {
                    case .success(let bytes): results.sizes[n] = bytes
                    case .failure(let failure): results.failures[n] = failure
                    }
                }
            }
            let workers = min(pending.count, threadCount)
            if workers == 1 {
                work(0)
            } else {
                DispatchQueue.concurrentPerform(iterations: workers, execute: work)
            }
            total += results.sizes.reduce(0, +)
            let failures = results.failures
            var warnings: [SoundFontWarning] = []
            for (n, failure) in failures.enumerated() {
                guard let failure else { continue }
                let index = pending[n]
                warnings.append(SoundFontWarning(location: SoundFontLocation(chunk: "sdta/smpl", offset: ranges[index].lowerBound),
                                                 message: "sample '\(names[index])' (\(index)) is \(failure); it plays silent"))
            }
            return .success(warnings)
        }
        return try result.get()
    }

    /// Decodes one sample and publishes it; returns the bytes it holds.
    private func decodeOne(_ index: Int) -> Result<Int, VorbisDecoder.Failure> {
        let range = ranges[index]
        let stream = UnsafeRawBufferPointer(rebasing: data[range])
        switch VorbisDecoder.decodeMono(stream, headerBytes: Self.headerBytes, maximumFrameCount: maximumFrameCount) {
        case .failure(let failure):
            slots[index].store(Self.failed, ordering: .releasing)
            return .failure(failure)
        case .success(let (memory, count)):
            // Loop points are relative to the decoded sample (FluidSynth's reading); repaired
            // as the reader repairs a SoundFont 2 sample's.
            var (loopStart, loopEnd) = loops[index]
            if loopStart > loopEnd { swap(&loopStart, &loopEnd) }
            if loopStart < 0 || loopStart > count { loopStart = 0 }
            if loopEnd < 0 || loopEnd > count { loopEnd = count }
            if loopStart > loopEnd { loopStart = loopEnd }
            memory.storeBytes(of: count, toByteOffset: 0, as: Int.self)
            memory.storeBytes(of: loopStart, toByteOffset: 8, as: Int.self)
            memory.storeBytes(of: loopEnd, toByteOffset: 16, as: Int.self)
            _ = (memory + Self.headerBytes).bindMemory(to: Int16.self, capacity: count)
            slots[index].store(UInt(bitPattern: memory), ordering: .releasing)
            return .success(Self.headerBytes + 2 * count)
        }
    }
}

/// What the workers of one decoding batch report, each into its own element.
private final class BatchResults: @unchecked Sendable {
    let sizes: UnsafeMutableBufferPointer<Int>
    let failures: UnsafeMutableBufferPointer<VorbisDecoder.Failure?>

    init(count: Int) {
        sizes = .allocate(capacity: count)
        sizes.initialize(repeating: 0)
        failures = .allocate(capacity: count)
        failures.initialize(repeating: nil)
    }

    deinit {
        sizes.deallocate()
        _ = failures.deinitialize()
        failures.deallocate()
    }
}
