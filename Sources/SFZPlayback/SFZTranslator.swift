import Sampler
import SFZ
import SoundFont
#if canImport(Glibc)
import Glibc
#endif

/// Collects "parsed but not played" notes: one warning per opcode and message, at the first
/// region that uses it, with a count of the others, so a thousand-region instrument does not
/// print a thousand lines for one opcode.
struct NotPlayedLog {
    private var order: [String] = []
    private var entries: [String: (warning: SFZWarning, more: Int)] = [:]

    mutating func add(_ region: SFZRegion, _ opcode: String, _ message: String) {
        let key = opcode + "\u{0}" + message
        if entries[key] != nil {
            entries[key]!.more += 1
            return
        }
        order.append(key)
        entries[key] = (SFZWarning(path: region.path, line: region.line, opcode: opcode, message: "`\(opcode)` \(message)"), 0)
    }

    var warnings: [SFZWarning] {
        order.map { key in
            var (warning, more) = entries[key]!
            if more > 0 { warning.message += " (and \(more) more region\(more == 1 ? "" : "s"))" }
            return warning
        }
    }
}

/// A sample file decoded into the bank: its first header, channels, frames, and the loop and
/// root key the file stores.
struct DecodedSample {
    var first: Int
    var channels: Int
    var frames: Int
    var loop: PCMLoop?
    var rootKey: Int?
}

/// SFZ regions turned into SoundFont regions over one bank's samples.
struct SFZTranslator {
    let options: SFZPlaybackOptions
    var storage = SoundFontBankBuilder()
    var notPlayed = NotPlayedLog()
    var outputGain = 0.0
    /// The sampler's selection rule of each SoundFont region, in order.
    var rules: [SamplerRegionRule] = []
    /// First header index, channel count, frames and stored loop and root key of each decoded
    /// file, by path.
    private var decoded: [String: DecodedSample] = [:]
    private var memoryUsed = 0

    static let parsedNotPlayed = "parsed but not played"
    /// The loudest the sampler's volume parameter goes.
    static let maximumOutputGain = 12.0

    init(options: SFZPlaybackOptions) {
        self.options = options
    }

    /// The region's gain in dB from `volume` and `amplitude`.
    static func gain(_ region: SFZRegion) -> Double {
        region.volume + (region.amplitude > 0 ? 20 * log10(region.amplitude / 100) : -200)
    }

    mutating func translate(_ regions: [SFZRegion]) throws(SFZPlaybackError) -> [SoundFontRegion] {
        let playing = regions.filter { selects($0) }
        let loudest = playing.map(Self.gain).max() ?? 0
        outputGain = min(max(0, loudest), Self.maximumOutputGain)
        if loudest > Self.maximumOutputGain, let region = playing.first(where: { Self.gain($0) == loudest }) {
            notPlayed.add(region, "volume", "asks for \(loudest) dB; gain above +\(Int(Self.maximumOutputGain)) dB is played at +\(Int(Self.maximumOutputGain)) dB")
        }
        var result: [SoundFontRegion] = []
        for region in playing {
            guard case .file(let path) = region.sample, var rule = rule(for: region) else { continue }
            let source = try samples(of: path, region: region)
            // As sfizz, a release region with no loop_mode and no loop in its file is one_shot:
            // striking the key again does not cut it.
            if region.loopMode == nil, source.loop == nil, region.trigger == .release || region.trigger == .releaseKey {
                rule.ignoresNoteOff = true
            }
            let before = result.count
            try append(region, source: source, to: &result)
            let channels = result.count - before
            for c in 0..<channels {
                var channelRule = rule
                // A stereo sample's right channel sounds with its left as one voice.
                channelRule.pairedWithPreviousRegion = c > 0
                channelRule.sfzVoicing = SamplerSFZVoicing(channel: channels == 1 ? .mono : c == 0 ? .left : .right,
                                                         width: region.width, position: region.position)
                rules.append(channelRule)
            }
        }
        return result
    }

    /// Whether the region goes into the bank; warns about the selection SoundFont cannot make.
    private mutating func selects(_ region: SFZRegion) -> Bool {
        switch region.sample {
        case nil:
            return false
        case .generator(let name)?:
            notPlayed.add(region, "sample", "\(Self.parsedNotPlayed): the built-in generator \(name) (region left out)")
            return false
        case .embedded(let name)?:
            notPlayed.add(region, "sample", "\(Self.parsedNotPlayed): the embedded sample \(name) (region left out)")
            return false
        case .file?:
            break
        }
        guard region.triggersOnNote, region.keyRange.low <= region.keyRange.high,
              region.velocityRange.low <= region.velocityRange.high, region.channelRange.low <= region.channelRange.high,
              region.randomRange.low < region.randomRange.high || region.randomRange.high >= 1 else { return false }
        return rule(for: region) != nil
    }

    /// The sampler rule for what SoundFont cannot select on: trigger, channels, round robin,
    /// random draw, key switch, controllers. Nil when a controller range holds no value.
    func rule(for region: SFZRegion) -> SamplerRegionRule? {
        var rule = SamplerRegionRule()
        switch region.trigger {
        case .attack: rule.trigger = .attack
        case .release: rule.trigger = .release
        case .releaseKey: rule.trigger = .releaseKey
        case .first: rule.trigger = .first
        case .legato: rule.trigger = .legato
        }
        rule.channels = UInt8(min(max(region.channelRange.low, 1), 16) - 1)...UInt8(min(max(region.channelRange.high, 1), 16) - 1)
        rule.ignoresNoteOff = region.loopMode == .oneShot
        rule.group = region.group
        rule.offBy = region.offBy
        rule.offReleases = region.offMode == .normal
        rule.offTime = region.offMode == .time ? region.offTime : nil
        rule.sequenceLength = max(1, region.sequenceLength)
        rule.sequencePosition = min(max(1, region.sequencePosition), rule.sequenceLength)
        rule.randomLow = region.randomRange.low
        rule.randomHigh = region.randomRange.high
        if let range = region.keyswitchRange, range.low <= range.high {
            rule.keyswitchRange = UInt8(min(max(range.low, 0), 127))...UInt8(min(max(range.high, 0), 127))
        }
        rule.polyphony = region.polyphony
        rule.notePolyphony = region.notePolyphony
        rule.noteSelfmask = region.noteSelfmask
        if region.cutoff != nil {
            switch region.filterType {
            case .lowPassTwoPole: rule.filter = .sfzLowPassTwoPole
            case .highPassTwoPole: rule.filter = .sfzHighPassTwoPole
            case .lowPassOnePole: rule.filter = .lowPassOnePole
            case .highPassOnePole: rule.filter = .highPassOnePole
            }
        } else {
            // sfizz filters only regions that give a cutoff.
            rule.filter = .unfiltered
        }
        rule.velocityGains = Self.velocityGains(region)
        rule.releaseDecibelsPerSecond = max(0, region.releaseTriggerDecay)
        let amp = region.amplitudeEnvelope
        if amp.start != 0 || Self.hasVelocityTerms(amp) { rule.amplitudeEnvelope = Self.envelopeRule(amp) }
        let fileg = region.filterEnvelope
        if region.cutoff != nil, fileg.depth != 0, fileg.start != 0 || Self.hasVelocityTerms(fileg) {
            rule.modulationEnvelope = Self.envelopeRule(fileg)
        }
        rule.keyswitch = region.keyswitchLast.map { UInt8(min(max($0, 0), 127)) }
        rule.keyswitchDefault = region.keyswitchDefault.map { UInt8(min(max($0, 0), 127)) }
        for (controller, range) in region.controllerRanges.sorted(by: { $0.key < $1.key }) where (0...127).contains(controller) {
            let low = min(max(range.low.rounded(.up), 0), 127), high = min(max(range.high.rounded(.down), 0), 127)
            guard low <= high else { return nil }
            rule.controllerRanges.append(SamplerControllerRange(controller: UInt8(controller), values: UInt8(low)...UInt8(high)))
        }
        return rule
    }

    /// The region's gain at each velocity, as sfizz computes it: the `amp_velcurve_N` curve, or
    /// velocity² (velocity / 127 squared) without one, then moved toward 1 as `amp_veltrack`
    /// falls from 100 %, and inverted for a negative `amp_veltrack`.
    static func velocityGains(_ region: SFZRegion) -> [Float] {
        let curve = region.velocityCurveTable()
        let track = region.ampVeltrack / 100
        return (0..<128).map { velocity in
            let x = Double(velocity) / 127
            let shaped = curve?[velocity] ?? x * x
            let lowered = abs(track) * (1 - shaped)
            return Float(track < 0 ? lowered : 1 - lowered)
        }
    }

    static func hasVelocityTerms(_ e: SFZEnvelope) -> Bool {
        e.velocityToDelay != 0 || e.velocityToAttack != 0 || e.velocityToHold != 0 || e.velocityToDecay != 0
            || e.velocityToSustain != 0 || e.velocityToRelease != 0
    }

    static func envelopeRule(_ e: SFZEnvelope) -> SamplerEnvelopeRule {
        var rule = SamplerEnvelopeRule()
        (rule.delay, rule.start, rule.attack, rule.hold, rule.decay, rule.sustain, rule.release)
            = (e.delay, e.start, e.attack, e.hold, e.decay, e.sustain, e.release)
        (rule.velocityToDelay, rule.velocityToAttack, rule.velocityToHold, rule.velocityToDecay, rule.velocityToSustain,
         rule.velocityToRelease) = (e.velocityToDelay, e.velocityToAttack, e.velocityToHold, e.velocityToDecay,
                                    e.velocityToSustain, e.velocityToRelease)
        return rule
    }

    /// The headers of the decoded file at `path`, decoding it the first time.
    private mutating func samples(of path: String, region: SFZRegion) throws(SFZPlaybackError) -> DecodedSample {
        if let known = decoded[path] { return known }
        let audio: PCMAudio
        do {
            audio = try SFZSampleReader.read(path, budget: options.maximumSampleMemory - memoryUsed)
        } catch {
            throw SFZPlaybackError(path: path, reason: "\(error.reason) (sample of the region at \(region.path):\(region.line))",
                                   isUnreadableInput: error.isUnreadableInput)
        }
        guard audio.frameCount > 0 else {
            throw SFZPlaybackError(path: path, reason: "no audio frames (sample of the region at \(region.path):\(region.line))")
        }
        let name = String(path.split(separator: "/").last ?? Substring(path))
        guard let first = storage.append(audio, name: String(name.prefix(20))) else {
            throw SFZPlaybackError(path: path, reason: "the instrument's audio exceeds \(Int32.max) sample points")
        }
        memoryUsed += SoundFontBankBuilder.bytes(frames: audio.frameCount, channels: audio.channels.count, lowBytes: true)
        let entry = DecodedSample(first: first, channels: audio.channels.count, frames: audio.frameCount,
                                  loop: audio.loop, rootKey: audio.rootKey)
        decoded[path] = entry
        return entry
    }

    static func timecents(_ seconds: Double) -> Int32 { SamplerEnvelopeRule.timecents(seconds) }

    private mutating func append(_ region: SFZRegion, source: DecodedSample,
                                 to result: inout [SoundFontRegion]) throws(SFZPlaybackError) {
        var generators = SoundFontGenerators.defaults
        var modulators = SoundFontModulator.defaults
        func silence(_ which: SoundFontModulator.Default) { modulators[which.rawValue].amount = 0 }
        warnAboutUnplayed(region)

        // Sample range.
        let lastFrame = source.frames - 1
        let firstPlayed = min(max(region.offset, 0), lastFrame)
        let lastPlayed = min(region.end ?? lastFrame, lastFrame)
        guard lastPlayed >= firstPlayed else {
            notPlayed.add(region, "end", "is before offset: the region has nothing to play (left out)")
            return
        }
        generators[.startAddressOffset] = Int32(firstPlayed % 32_768)
        generators[.startAddressCoarseOffset] = Int32(firstPlayed / 32_768)
        let endDelta = lastPlayed + 1 - source.frames
        generators[.endAddressOffset] = Int32(endDelta % 32_768)
        generators[.endAddressCoarseOffset] = Int32(endDelta / 32_768)

        // Loop: SFZ's loop_end is the loop's last frame, a SoundFont loop end the frame after it.
        // As sfizz, the file's loop stands in for loop_start/loop_end the region leaves out, and
        // a file loop makes a region without loop_mode loop_continuous.
        var loop: (start: Int, end: Int)?
        switch region.loopMode ?? (source.loop != nil ? .loopContinuous : .noLoop) {
        case .noLoop: generators[.sampleModes] = 0
        case .oneShot:
            // Note-off leaves these voices alone (the region's rule), so they play to the end.
            generators[.sampleModes] = 0
        case .loopContinuous, .loopSustain:
            let start = min(max(region.loopStart ?? source.loop?.start ?? 0, 0), lastFrame)
            let end = min(max(region.loopEnd ?? source.loop?.end ?? lastFrame, 0), lastFrame) + 1
            if end - start >= 2 {
                loop = (start, end)
                generators[.sampleModes] = region.loopMode == .loopSustain ? 3 : 1
            } else {
                notPlayed.add(region, "loop_end", "gives a loop shorter than 2 frames: played without loop")
            }
        }

        // Pitch.
        var rootKey = region.pitchKeycenter
        if region.pitchKeycenterFromSample {
            if let stored = source.rootKey {
                rootKey = stored
            } else {
                notPlayed.add(region, "pitch_keycenter", "is sample, but the sample stores no root key: played at \(rootKey)")
            }
        }
        generators[.overridingRootKey] = Int32(rootKey)
        // A SoundFont tunes at most ten octaves either way (coarse tune ±120 semitones); past
        // that every note plays outside the sample's range anyway.
        let asked = Int((region.transpose * 100 + region.tune).rounded())
        let cents = min(max(asked, -12_000), 12_000)
        if cents != asked { notPlayed.add(region, "tune", "with transpose asks for \(asked) cents; played at \(cents)") }
        generators[.coarseTune] = Int32(cents / 100)
        generators[.fineTune] = Int32(cents % 100)
        generators[.scaleTuning] = Int32(min(max(region.pitchKeytrack.rounded(), 0), 1200))

        // Level. The sampler scales attenuation generators by 0.4, as FluidSynth does for banks.
        let attenuationDecibels = min(max(outputGain - Self.gain(region), 0), 144)
        generators[.initialAttenuation] = Int32((attenuationDecibels * 10 / 0.4).rounded())
        // SFZ's velocity-to-gain is the region rule's gain table, in place of SoundFont's concave curve.
        silence(.velocityToAttenuation)

        // Amplitude envelope.
        let amp = region.amplitudeEnvelope
        generators[.delayVolEnv] = Self.timecents(amp.delay)
        generators[.attackVolEnv] = Self.timecents(amp.attack)
        generators[.holdVolEnv] = Self.timecents(amp.hold)
        generators[.decayVolEnv] = Self.timecents(amp.decay)
        generators[.releaseVolEnv] = Self.timecents(amp.release)
        // The sampler (as FluidSynth) falls 96 dB over 1000 units of sustain, not 100 dB.
        generators[.sustainVolEnv] = SamplerEnvelopeRule.volumeSustain(amp.sustain)

        // SFZ has no vibrato from the modulation wheel or channel pressure (SoundFont's defaults 8.4.3 and 8.4.4).
        silence(.channelPressureToVibrato)
        silence(.modulationWheelToVibrato)
        // Volume and expression follow sfizz's curve in the region rule's SFZ voicing, not
        // SoundFont's concave one (8.4.5 and 8.4.7); sfizz sends nothing to reverb or chorus
        // without an <effect> (8.4.8 and 8.4.9).
        for which in [.volumeToAttenuation, .expressionToAttenuation, .reverbSend, .chorusSend] as [SoundFontModulator.Default] { silence(which) }

        // Filter: SFZ has no velocity-to-cutoff unless fil_veltrack says so. Every fil_type
        // follows the same cutoff generators; the region rule's filter kind gives the shape (the
        // one-pole kinds ignore the resonance, as sfizz's).
        silence(.velocityToFilterCutoff)
        if let cutoff = region.cutoff {
            var absoluteCents = 1200 * log2(max(cutoff, 1) / 8.176)
            generators[.initialFilterQ] = Int32(min(max(region.resonance * 10, 0), 960).rounded())
            if region.filterVeltrack != 0 {
                modulators.append(SoundFontModulator(source: 0x0002, destination: 8,
                                                     amount: Int16(min(max(region.filterVeltrack, -9600), 9600).rounded()),
                                                     amountSource: 0, transform: 0))
            }
            if region.filterKeytrack != 0 {
                // The key source runs 0...127/128, so the amount is 128 keys' worth.
                let perKey = min(max(region.filterKeytrack, -255), 255)
                if perKey != region.filterKeytrack { notPlayed.add(region, "fil_keytrack", "beyond ±255 cents per key is played as ±255") }
                modulators.append(SoundFontModulator(source: 0x0003, destination: 8, amount: Int16((perKey * 128).rounded()),
                                                     amountSource: 0, transform: 0))
                absoluteCents -= perKey * Double(region.filterKeycenter)
            }
            generators[.initialFilterCutoff] = Int32(absoluteCents.rounded())
            let fileg = region.filterEnvelope
            if fileg.depth != 0 {
                generators[.delayModEnv] = Self.timecents(fileg.delay)
                generators[.attackModEnv] = Self.timecents(fileg.attack)
                generators[.holdModEnv] = Self.timecents(fileg.hold)
                generators[.decayModEnv] = Self.timecents(fileg.decay)
                generators[.releaseModEnv] = Self.timecents(fileg.release)
                generators[.sustainModEnv] = SamplerEnvelopeRule.modulationSustain(fileg.sustain)
                generators[.modEnvToFilterCutoff] = Int32(min(max(fileg.depth, -12_000), 12_000).rounded())
            }
        }

        let keys = UInt8(min(max(region.keyRange.low, 0), 127))...UInt8(min(max(region.keyRange.high, 0), 127))
        let velocities = UInt8(min(max(region.velocityRange.low, 0), 127))...UInt8(min(max(region.velocityRange.high, 0), 127))
        let firstHeader = storage.samples.count
        for c in 0..<source.channels {
            var header = storage.samples[source.first + c]
            header.originalPitch = UInt8(rootKey)
            if let loop {
                header.loopStart = header.start + loop.start
                header.loopEnd = header.start + loop.end
            }
            if header.link != nil { header.link = firstHeader + 1 - c }
            storage.samples.append(header)
        }
        // The pan generator carries `pan` (and CC 10 adds to it, as in sfizz); the region
        // rule's SFZ voicing places each channel of a stereo sample with width and position.
        generators[.pan] = Int32(min(max(region.pan * 5, -500), 500).rounded())
        for c in 0..<source.channels {
            result.append(SoundFontRegion(keyRange: keys, velocityRange: velocities, sampleIndex: firstHeader + c,
                                          generators: generators, modulators: modulators))
        }
    }

    /// One warning per opcode a region uses that the bank cannot play.
    private mutating func warnAboutUnplayed(_ region: SFZRegion) {
        func check(_ unplayed: Bool, _ opcode: String) {
            if unplayed { notPlayed.add(region, opcode, Self.parsedNotPlayed) }
        }
        check(region.cutoff == nil && region.filterEnvelope.depth != 0, "fileg_depth")
    }
}
