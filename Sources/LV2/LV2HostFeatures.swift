import CLilv
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How serious a plugin's log line is (`log:Trace`, `log:Note`, `log:Warning`, `log:Error`).
public enum LV2LogLevel: Int, Sendable, Hashable {
    /// `log:Trace`: debugging detail.
    case trace = 0
    /// `log:Note`, and any type a plugin invents.
    case note = 1
    /// `log:Warning`.
    case warning = 2
    /// `log:Error`.
    case error = 3
}

/// Receives a plugin's log lines (never written to standard output by Tactus).
public typealias LV2LogHandler = @Sendable (_ plugin: String, _ level: LV2LogLevel, _ message: String) -> Void

/// The features a host gives a plugin instance: URID map and unmap, options, bounded (and
/// fixed, power-of-two) block length, worker schedule and log. Owns their C memory, which
/// must outlive the instance.
final class LV2HostFeatures {
    let map: OpaquePointer
    let worker: LV2Worker
    let logBuffer: LV2LogBuffer
    private let log: OpaquePointer
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private let features: UnsafeMutablePointer<LV2_Feature>
    private let featureCount: Int
    /// The NULL-terminated array `instantiate` takes.
    let featureList: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
    private let options: UnsafeMutablePointer<LV2_Options_Option>
    private let optionValues: UnsafeMutablePointer<Int32>
    private let sampleRateValue: UnsafeMutablePointer<Float>
    private let schedule: UnsafeMutablePointer<LV2_Worker_Schedule>

    /// URIDs the node uses on the audio thread, mapped up front.
    let atomSequence: LV2_URID, atomChunk: LV2_URID, midiEvent: LV2_URID
    /// The URIDs of a `time:Position` object and its properties' types.
    let time: LV2TimeURIDs

    init(plugin: String, sampleRate: Double, blockLength: Int, sequenceSize: Int, logHandler: LV2LogHandler?) {
        guard let map = tactus_urid_map_new() else { fatalError("out of memory for the URID map") }
        self.map = map
        func urid(_ uri: String) -> LV2_URID { tactus_urid_map_uri(map, uri) }
        // The URIs plugins commonly map at instantiation and in run, so that a plugin mapping
        // them on the audio thread finds them without taking the map's lock.
        atomSequence = urid(LV2URI.atomSequence)
        atomChunk = urid(LV2URI.atomChunk)
        midiEvent = urid(LV2URI.midiEvent)
        time = LV2TimeURIDs(object: urid(LV2URI.atomObject), long: urid(LV2URI.atomLong), float: urid(LV2URI.atomFloat),
                            int: urid(LV2URI.atomInt), position: urid(LV2URI.timePosition), frame: urid(LV2URI.time + "frame"),
                            speed: urid(LV2URI.time + "speed"), bar: urid(LV2URI.time + "bar"), barBeat: urid(LV2URI.time + "barBeat"),
                            beatUnit: urid(LV2URI.time + "beatUnit"), beatsPerBar: urid(LV2URI.time + "beatsPerBar"),
                            beatsPerMinute: urid(LV2URI.time + "beatsPerMinute"))
        for uri in ["http://lv2plug.in/ns/ext/atom#Blank", "http://lv2plug.in/ns/ext/atom#Object", "http://lv2plug.in/ns/ext/atom#Bool",
                    "http://lv2plug.in/ns/ext/atom#Double", "http://lv2plug.in/ns/ext/atom#Long", "http://lv2plug.in/ns/ext/atom#Path",
                    "http://lv2plug.in/ns/ext/atom#String", "http://lv2plug.in/ns/ext/atom#URID", "http://lv2plug.in/ns/ext/atom#Vector",
                    "http://lv2plug.in/ns/ext/atom#eventTransfer", "http://lv2plug.in/ns/ext/atom#frameTime",
                    "http://lv2plug.in/ns/ext/patch#Set", "http://lv2plug.in/ns/ext/patch#Get", "http://lv2plug.in/ns/ext/patch#property",
                    "http://lv2plug.in/ns/ext/patch#value", "http://lv2plug.in/ns/ext/time#Position", "http://lv2plug.in/ns/ext/time#bar",
                    "http://lv2plug.in/ns/ext/time#barBeat", "http://lv2plug.in/ns/ext/time#beatsPerMinute",
                    "http://lv2plug.in/ns/ext/time#beatsPerBar", "http://lv2plug.in/ns/ext/time#beatUnit",
                    "http://lv2plug.in/ns/ext/time#speed", "http://lv2plug.in/ns/ext/time#frame",
                    LV2URI.atomInt, LV2URI.atomFloat, LV2URI.sampleRate, LV2URI.minBlockLength, LV2URI.maxBlockLength,
                    LV2URI.nominalBlockLength, LV2URI.sequenceSize] {
            _ = urid(uri)
        }

        logBuffer = LV2LogBuffer(plugin: plugin, handler: logHandler)
        guard let log = tactus_log_new(map, lv2LogSink, Unmanaged.passUnretained(logBuffer).toOpaque()) else {
            fatalError("out of memory for the log feature")
        }
        self.log = log
        worker = LV2Worker()

        // Options: every block is exactly `blockLength` frames.
        optionValues = .allocate(capacity: 4)
        optionValues[0] = Int32(blockLength); optionValues[1] = Int32(blockLength)
        optionValues[2] = Int32(blockLength); optionValues[3] = Int32(sequenceSize)
        sampleRateValue = .allocate(capacity: 1)
        sampleRateValue.pointee = Float(sampleRate)
        options = .allocate(capacity: 6)
        let intType = urid(LV2URI.atomInt), floatType = urid(LV2URI.atomFloat)
        let keys = [LV2URI.minBlockLength, LV2URI.maxBlockLength, LV2URI.nominalBlockLength, LV2URI.sequenceSize]
        for (i, key) in keys.enumerated() {
            options[i] = LV2_Options_Option(context: UInt32(TACTUS_LV2_OPTIONS_INSTANCE), subject: 0, key: urid(key),
                                            size: 4, type: intType, value: UnsafeRawPointer(optionValues + i))
        }
        options[4] = LV2_Options_Option(context: UInt32(TACTUS_LV2_OPTIONS_INSTANCE), subject: 0, key: urid(LV2URI.sampleRate),
                                        size: 4, type: floatType, value: UnsafeRawPointer(sampleRateValue))
        options[5] = LV2_Options_Option(context: 0, subject: 0, key: 0, size: 0, type: 0, value: nil)

        schedule = .allocate(capacity: 1)
        schedule.pointee = LV2_Worker_Schedule(handle: Unmanaged.passUnretained(worker).toOpaque(), schedule_work: lv2ScheduleWork)

        var list: [(String, UnsafeMutableRawPointer?)] = [
            (LV2URI.uridMap, UnsafeMutableRawPointer(tactus_urid_map_feature(map))),
            (LV2URI.uridUnmap, UnsafeMutableRawPointer(tactus_urid_unmap_feature(map))),
            (LV2URI.options, UnsafeMutableRawPointer(options)),
            (LV2URI.boundedBlockLength, nil),
            (LV2URI.fixedBlockLength, nil),
            (LV2URI.powerOf2BlockLength, nil),
            (LV2URI.workerSchedule, UnsafeMutableRawPointer(schedule)),
            (LV2URI.log, UnsafeMutableRawPointer(tactus_log_feature(log))),
        ]
        list.sort { $0.0 < $1.0 }
        featureCount = list.count
        features = .allocate(capacity: list.count)
        featureList = .allocate(capacity: list.count + 1)
        for (i, (uri, data)) in list.enumerated() {
            let copy = strdup(uri)!
            strings.append(copy)
            features[i] = LV2_Feature(URI: copy, data: data)
            featureList[i] = UnsafePointer(features + i)
        }
        featureList[list.count] = nil
    }

    deinit {
        for string in strings { free(string) }
        features.deallocate()
        featureList.deallocate()
        options.deallocate()
        optionValues.deallocate()
        sampleRateValue.deallocate()
        schedule.deallocate()
        tactus_log_free(log)
        tactus_urid_map_free(map)
    }
}

/// The log feature's sink: lines logged on the audio thread are copied into a fixed buffer
/// (no allocation) and handed to the handler later, on the control side; lines logged
/// elsewhere go to the handler at once.
final class LV2LogBuffer {
    let plugin: String
    let handler: LV2LogHandler?
    /// Set while the plugin's `run` (or the offline worker) executes.
    var onAudioThread = false
    private let capacity = 16_384
    private let bytes: UnsafeMutablePointer<UInt8>
    private var used = 0
    /// Lines that did not fit in the buffer since the last drain.
    private(set) var dropped = 0

    init(plugin: String, handler: LV2LogHandler?) {
        self.plugin = plugin
        self.handler = handler
        bytes = .allocate(capacity: capacity)
    }

    deinit { bytes.deallocate() }

    func receive(level: Int32, message: UnsafePointer<CChar>) {
        guard let handler else { return }
        if !onAudioThread {
            handler(plugin, LV2LogLevel(rawValue: Int(level)) ?? .note, String(cString: message))
            return
        }
        let length = strlen(message)
        guard used + length + 2 <= capacity else {
            dropped += 1
            return
        }
        bytes[used] = UInt8(truncatingIfNeeded: level)
        memcpy(bytes + used + 1, message, length)
        bytes[used + 1 + length] = 0
        used += length + 2
    }

    /// Hands the buffered lines to the handler (control side).
    func drain() {
        guard let handler else { return }
        var at = 0
        while at < used {
            let level = LV2LogLevel(rawValue: Int(bytes[at])) ?? .note
            let text = String(cString: bytes + at + 1)
            handler(plugin, level, text)
            at += 1 + strlen(UnsafeRawPointer(bytes + at + 1).assumingMemoryBound(to: CChar.self)) + 1
        }
        used = 0
        if dropped > 0 {
            handler(plugin, .warning, "\(dropped) log lines logged while rendering were dropped (the log buffer was full)")
            dropped = 0
        }
    }
}

private let lv2LogSink: tactus_log_sink = { context, level, message in
    guard let context, let message else { return }
    Unmanaged<LV2LogBuffer>.fromOpaque(context).takeUnretainedValue().receive(level: level, message: message)
}

/// The worker, in one of two modes.
///
/// Synchronous (offline, the default): requests the plugin schedules during `run` are queued
/// in a fixed buffer and run in order right after `run` returns, on the same thread, followed
/// by their responses and `end_run`, so the work is always done by the next run and a worker
/// plugin renders the same every time.
///
/// In the background (live): a thread of its own does the work. Requests and responses cross
/// between the audio thread and that thread in lock-free rings allocated once; after each
/// `run` the audio thread hands the plugin the responses that have arrived, then `end_run`.
/// The audio thread never waits for the work (a file being loaded), whose result reaches the
/// plugin some runs later.
final class LV2Worker: @unchecked Sendable {
    private static let capacity = 1 << 16
    private let requests: UnsafeMutablePointer<UInt8>
    private var requestBytes = 0
    private let responses: UnsafeMutablePointer<UInt8>
    private var responseBytes = 0
    var interface: UnsafePointer<LV2_Worker_Interface>?

    // The background mode's rings, its thread's message buffers and its thread.
    private let requestRing = LV2MessageRing(capacity: LV2Worker.capacity)
    private let responseRing = LV2MessageRing(capacity: LV2Worker.capacity)
    private let audioScratch = UnsafeMutableRawPointer.allocate(byteCount: LV2Worker.capacity, alignment: 8)
    private let workerScratch = UnsafeMutableRawPointer.allocate(byteCount: LV2Worker.capacity, alignment: 8)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// True while a thread of its own does the work.
    private(set) var isInBackground = false

    init() {
        requests = .allocate(capacity: Self.capacity)
        responses = .allocate(capacity: Self.capacity)
    }

    deinit {
        stopBackground()
        requests.deallocate()
        responses.deallocate()
        audioScratch.deallocate()
        workerScratch.deallocate()
    }

    private static func append(_ buffer: UnsafeMutablePointer<UInt8>, _ used: inout Int, capacity: Int, size: UInt32, data: UnsafeRawPointer?) -> Bool {
        let total = 8 + (Int(size) + 7) & ~7
        guard used + total <= capacity else { return false }
        UnsafeMutableRawPointer(buffer + used).storeBytes(of: size, as: UInt32.self)
        if let data, size > 0 { memcpy(buffer + used + 8, data, Int(size)) }
        used += total
        return true
    }

    func schedule(size: UInt32, data: UnsafeRawPointer?) -> LV2_Worker_Status {
        guard interface != nil else { return LV2_Worker_Status(TACTUS_LV2_WORKER_ERR_UNKNOWN) }
        if isInBackground {
            guard requestRing.write(size: size, data: data) else { return LV2_Worker_Status(TACTUS_LV2_WORKER_ERR_NO_SPACE) }
            wake.signal()
            return LV2_Worker_Status(TACTUS_LV2_WORKER_SUCCESS)
        }
        return Self.append(requests, &requestBytes, capacity: Self.capacity, size: size, data: data)
            ? LV2_Worker_Status(TACTUS_LV2_WORKER_SUCCESS) : LV2_Worker_Status(TACTUS_LV2_WORKER_ERR_NO_SPACE)
    }

    func respond(size: UInt32, data: UnsafeRawPointer?) -> LV2_Worker_Status {
        if isInBackground {
            return responseRing.write(size: size, data: data)
                ? LV2_Worker_Status(TACTUS_LV2_WORKER_SUCCESS) : LV2_Worker_Status(TACTUS_LV2_WORKER_ERR_NO_SPACE)
        }
        return Self.append(responses, &responseBytes, capacity: Self.capacity, size: size, data: data)
            ? LV2_Worker_Status(TACTUS_LV2_WORKER_SUCCESS) : LV2_Worker_Status(TACTUS_LV2_WORKER_ERR_NO_SPACE)
    }

    /// After a `run`: in the background, hands the plugin the responses that have arrived;
    /// otherwise runs the queued work, then delivers the responses. Then `end_run`. Work a
    /// response schedules waits for the next run, as it would with a worker thread.
    func perform(handle: LV2_Handle?) {
        guard let interface else { return }
        if isInBackground {
            while let size = responseRing.read(into: audioScratch, bufferCapacity: Self.capacity) {
                _ = interface.pointee.work_response?(handle, size, UnsafeRawPointer(audioScratch))
            }
            _ = interface.pointee.end_run?(handle)
            return
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        var at = 0
        let pending = requestBytes
        while at < pending {
            let size = UnsafeRawPointer(requests + at).load(as: UInt32.self)
            _ = interface.pointee.work?(handle, lv2WorkerRespond, me, size, UnsafeRawPointer(requests + at + 8))
            at += 8 + (Int(size) + 7) & ~7
        }
        // Requests scheduled by `work` itself (rare) stay queued after those just done.
        if requestBytes > pending {
            memmove(requests, requests + pending, requestBytes - pending)
        }
        requestBytes -= pending
        at = 0
        let responded = responseBytes
        while at < responded {
            let size = UnsafeRawPointer(responses + at).load(as: UInt32.self)
            _ = interface.pointee.work_response?(handle, size, UnsafeRawPointer(responses + at + 8))
            at += 8 + (Int(size) + 7) & ~7
        }
        responseBytes = 0
        _ = interface.pointee.end_run?(handle)
    }

    /// Starts the thread that does the work for the plugin instance `handle` (control side,
    /// while the plugin is not running). Nothing happens for a plugin without a worker.
    func startBackground(handle: LV2_Handle?) {
        guard !isInBackground, interface != nil else { return }
        isInBackground = true
        stopping.store(false, ordering: .relaxed)
        // As addresses: pointers are not Sendable, and the thread's closure must be.
        let handleAddress = UInt(bitPattern: handle)
        let thread = Thread { [self] in
            let handle = UnsafeMutableRawPointer(bitPattern: handleAddress)
            let me = Unmanaged.passUnretained(self).toOpaque()
            guard let interface else {
                finished.signal()
                return
            }
            while true {
                wake.wait()
                if stopping.load(ordering: .acquiring) { break }
                while let size = requestRing.read(into: workerScratch, bufferCapacity: Self.capacity) {
                    _ = interface.pointee.work?(handle, lv2WorkerRespond, me, size, UnsafeRawPointer(workerScratch))
                }
            }
            finished.signal()
        }
        thread.name = "tactus-lv2-worker"
        thread.start()
    }

    /// Stops the thread once it has done the work under way (control side, while the plugin is
    /// not running): requests it had not taken and responses the plugin had not received are
    /// kept, for the synchronous mode to deliver after the next run.
    func stopBackground() {
        guard isInBackground else { return }
        stopping.store(true, ordering: .releasing)
        wake.signal()
        finished.wait()
        isInBackground = false
        while let size = requestRing.read(into: workerScratch, bufferCapacity: Self.capacity) {
            _ = Self.append(requests, &requestBytes, capacity: Self.capacity, size: size, data: workerScratch)
        }
        while let size = responseRing.read(into: workerScratch, bufferCapacity: Self.capacity) {
            _ = Self.append(responses, &responseBytes, capacity: Self.capacity, size: size, data: workerScratch)
        }
    }

    /// Performs until no work is left, including work that responses schedule (eg-sampler
    /// frees the sample it replaced so), at most eight rounds (control side, synchronous mode,
    /// while the plugin is not running). Dropping such work would lose a file or leak memory.
    func drain(handle: LV2_Handle?) {
        for _ in 0..<8 where requestBytes > 0 || responseBytes > 0 {
            perform(handle: handle)
        }
    }

    func clear() {
        requestBytes = 0
        responseBytes = 0
    }
}

private let lv2ScheduleWork: @convention(c) (UnsafeMutableRawPointer?, UInt32, UnsafeRawPointer?) -> LV2_Worker_Status = { handle, size, data in
    guard let handle else { return LV2_Worker_Status(TACTUS_LV2_WORKER_ERR_UNKNOWN) }
    return Unmanaged<LV2Worker>.fromOpaque(handle).takeUnretainedValue().schedule(size: size, data: data)
}

private let lv2WorkerRespond: LV2_Worker_Respond_Function = { handle, size, data in
    guard let handle else { return LV2_Worker_Status(TACTUS_LV2_WORKER_ERR_UNKNOWN) }
    return Unmanaged<LV2Worker>.fromOpaque(handle).takeUnretainedValue().respond(size: size, data: data)
}

/// The URIDs a `time:Position` object is written with.
struct LV2TimeURIDs {
    let object, long, float, int: LV2_URID
    let position, frame, speed, bar, barBeat, beatUnit, beatsPerBar, beatsPerMinute: LV2_URID
}
