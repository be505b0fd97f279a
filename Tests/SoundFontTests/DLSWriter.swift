import SoundFont

/// Writes small DLS banks for tests, straight from the reader's public model: the waves with
/// their `wsmp` and name, the instruments with their regions and articulation, a pool table
/// naming every wave in order.
struct DLSWriter {
    struct Wave {
        var name: String
        var points: [Int16]
        var sampleRate = 22_050
        var info: DLSSampleInfo? = DLSSampleInfo()
        /// 8-bit unsigned points instead of 16-bit.
        var eightBit = false
    }

    var name: String? = "Test DLS"
    var waves: [Wave] = []
    var instruments: [DLSInstrument] = []
    /// Write `rgn2`/`lar2`/`art2` (DLS Level 2) instead of `rgn `/`lart`/`art1`.
    var level2 = false

    static func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
        var out = Array(id.utf8)
        out += le32(UInt32(body.count))
        out += body
        if body.count & 1 == 1 { out.append(0) }
        return out
    }

    static func list(_ type: String, _ children: [[UInt8]]) -> [UInt8] {
        chunk("LIST", Array(type.utf8) + children.flatMap { $0 })
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }

    static func info(_ name: String) -> [UInt8] {
        list("INFO", [chunk("INAM", Array(name.utf8) + [0])])
    }

    static func wsmp(_ info: DLSSampleInfo) -> [UInt8] {
        var body = le32(20) + le16(info.unityNote) + le16(UInt16(bitPattern: info.fineTune))
        body += le32(UInt32(bitPattern: info.gain)) + le32(info.options) + le32(UInt32(info.loops.count))
        for loop in info.loops { body += le32(16) + le32(loop.type) + le32(loop.start) + le32(loop.length) }
        return chunk("wsmp", body)
    }

    func articulation(_ connections: [DLSConnection]) -> [UInt8] {
        var body = Self.le32(8) + Self.le32(UInt32(connections.count))
        for c in connections {
            body += Self.le16(c.source) + Self.le16(c.control) + Self.le16(c.destination) + Self.le16(c.transform)
            body += Self.le32(UInt32(bitPattern: c.scale))
        }
        return Self.list(level2 ? "lar2" : "lart", [Self.chunk(level2 ? "art2" : "art1", body)])
    }

    func bytes() -> [UInt8] {
        var form: [UInt8] = Array("DLS ".utf8)
        form += Self.chunk("colh", Self.le32(UInt32(instruments.count)))
        form += Self.chunk("vers", Self.le32(0x0001_0002) + Self.le32(0x0003_0004))
        var instrumentLists: [[UInt8]] = []
        for instrument in instruments {
            var regions: [[UInt8]] = []
            for r in instrument.regions {
                var header = Self.le16(r.keyLow) + Self.le16(r.keyHigh) + Self.le16(r.velocityLow) + Self.le16(r.velocityHigh)
                header += Self.le16(r.options) + Self.le16(r.keyGroup)
                if level2 { header += Self.le16(r.layer) }
                var parts = [Self.chunk("rgnh", header)]
                if let info = r.sampleInfo { parts.append(Self.wsmp(info)) }
                parts.append(Self.chunk("wlnk", Self.le16(r.linkOptions) + Self.le16(r.phaseGroup) + Self.le32(r.channel) + Self.le32(r.waveIndex)))
                if !r.connections.isEmpty { parts.append(articulation(r.connections)) }
                regions.append(Self.list(level2 ? "rgn2" : "rgn ", parts))
            }
            let bank = instrument.bank | (instrument.isDrumKit ? 0x8000_0000 : 0)
            var parts = [Self.chunk("insh", Self.le32(UInt32(instrument.regions.count)) + Self.le32(bank) + Self.le32(instrument.program)),
                         Self.list("lrgn", regions)]
            if !instrument.connections.isEmpty { parts.append(articulation(instrument.connections)) }
            parts.append(Self.info(instrument.name))
            instrumentLists.append(Self.list("ins ", parts))
        }
        form += Self.list("lins", instrumentLists)
        var waveLists: [[UInt8]] = []
        var offsets: [UInt32] = []
        var offset = 0
        for wave in waves {
            let bits: UInt16 = wave.eightBit ? 8 : 16
            let blockAlign = bits / 8
            var format = Self.le16(1) + Self.le16(1) + Self.le32(UInt32(wave.sampleRate))
            format += Self.le32(UInt32(wave.sampleRate) * UInt32(blockAlign)) + Self.le16(blockAlign) + Self.le16(bits)
            let data: [UInt8] = wave.eightBit
                ? wave.points.map { UInt8(truncatingIfNeeded: Int($0 >> 8) + 128) }
                : wave.points.flatMap { Self.le16(UInt16(bitPattern: $0)) }
            var parts = [Self.chunk("fmt ", format)]
            if let info = wave.info { parts.append(Self.wsmp(info)) }
            parts.append(Self.chunk("data", data))
            parts.append(Self.info(wave.name))
            let list = Self.list("wave", parts)
            offsets.append(UInt32(offset))
            offset += list.count
            waveLists.append(list)
        }
        form += Self.chunk("ptbl", Self.le32(8) + Self.le32(UInt32(waves.count)) + offsets.flatMap { Self.le32($0) })
        form += Self.list("wvpl", waveLists)
        if let name { form += Self.info(name) }
        return Self.chunk("RIFF", form)
    }

    /// An RMI file: `smf` in a `data` chunk, then this bank as a `RIFF DLS ` chunk.
    func rmi(smf: [UInt8]) -> [UInt8] {
        Self.chunk("RIFF", Array("RMID".utf8) + Self.chunk("data", smf) + bytes())
    }

    /// A sine-ish wave of `count` points (a triangle, so it needs no Foundation).
    static func triangle(_ count: Int, period: Int = 50, amplitude: Int = 12_000) -> [Int16] {
        (0..<count).map { i in
            let phase = i % period
            let up = phase < period / 2
            let v = up ? phase * 4 * amplitude / period - amplitude : amplitude - (phase - period / 2) * 4 * amplitude / period
            return Int16(clamping: v)
        }
    }
}
