import Foundation
import Synchronization

/// MIDI arriving on a JACK client's MIDI input, handed to the control side with the monotonic
/// host time it arrived at: what a recorder needs (`MIDIRecorder` through a
/// recording clock), as the ALSA sequencer input gives it.
///
/// The JACK thread copies each period's messages into a ring allocated up front (never
/// allocating or waiting); a thread of the input's own reads the ring every millisecond and
/// calls the handler in arrival order. A message JACK delivers at frame `f` of a period
/// arrived during the period before (JACK hands a period's input over at its end), so its
/// host time is the period's start plus `f` frames minus one period.
public final class JACKMIDIInput: @unchecked Sendable {
    /// Bytes the ring holds; a burst larger than this between two reads is dropped.
    public let capacity: Int
    private let ring: UnsafeMutablePointer<UInt8>
    private let writeIndex = Atomic<Int>(0)
    private let readIndex = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    // Each record: 8 bytes of host time, 2 of length, then the message.
    private static let headerBytes = 10

    /// An input whose ring holds `capacity` bytes.
    public init(capacity: Int = 1 << 16) {
        self.capacity = max(1024, capacity)
        ring = .allocate(capacity: self.capacity)
        ring.initialize(repeating: 0, count: self.capacity)
    }

    deinit {
        stop()
        ring.deallocate()
    }

    /// Messages dropped because the ring was full (or longer than it).
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// Copies the period's input messages into the ring. JACK's thread; never allocates.
    func receive(_ cycle: JACKCycle, sampleRate: Int) {
        let count = cycle.midiInputCount
        guard count > 0 else { return }
        var write = writeIndex.load(ordering: .relaxed)
        let read = readIndex.load(ordering: .acquiring)
        for index in 0..<count {
            guard let event = cycle.midiInput(at: index), event.bytes.count > 0, event.bytes.count <= Int(UInt16.max) else { continue }
            let size = Self.headerBytes + event.bytes.count
            guard capacity - (write - read) >= size else { dropped.add(1, ordering: .relaxed); continue }
            let frames = Int64(event.frame - cycle.frameCount)
            var host = cycle.hostNanoseconds + frames * 1_000_000_000 / Int64(sampleRate)
            var length = UInt16(event.bytes.count)
            withUnsafeBytes(of: &host) { put($0, at: write) }
            withUnsafeBytes(of: &length) { put($0, at: write + 8) }
            put(UnsafeRawBufferPointer(event.bytes), at: write + Self.headerBytes)
            write += size
        }
        writeIndex.store(write, ordering: .releasing)
    }

    private func put(_ bytes: UnsafeRawBufferPointer, at index: Int) {
        for (k, byte) in bytes.enumerated() { ring[(index + k) % capacity] = byte }
    }

    private func get(_ count: Int, at index: Int) -> [UInt8] {
        (0..<count).map { ring[(index + $0) % capacity] }
    }

    /// Reads what the JACK thread wrote and hands each message to `deliver`, in order.
    /// Control side; ``start(_:)``'s thread calls it, and a program that polls may instead.
    public func drain(_ deliver: (_ hostNanos: Int64, _ bytes: [UInt8]) -> Void) {
        var read = readIndex.load(ordering: .relaxed)
        let write = writeIndex.load(ordering: .acquiring)
        while read < write {
            let header = get(Self.headerBytes, at: read)
            let host = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: Int64.self) }
            let length = Int(header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt16.self) })
            deliver(host, get(length, at: read + Self.headerBytes))
            read += Self.headerBytes + length
        }
        readIndex.store(read, ordering: .releasing)
    }

    /// Starts a thread that hands every message to `deliver` within about a millisecond of
    /// the period that brought it, in arrival order.
    public func start(_ deliver: @escaping @Sendable (_ hostNanos: Int64, _ bytes: [UInt8]) -> Void) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                drain(deliver)
                usleep(1_000)
            }
            drain(deliver)
            finished.signal()
        }
        thread.name = "tactus-jack-midi-in"
        self.thread = thread
        thread.start()
    }

    /// Stops the thread after it delivered what was received.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
        thread = nil
    }
}
