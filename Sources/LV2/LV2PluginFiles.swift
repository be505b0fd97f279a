import CLilv

extension LV2PluginNode {
    /// Sets a file parameter of the plugin (a sample for a sampler, a bank for a SoundFont
    /// player, ``LV2PluginInfo/fileParameters``): sends it `patch:Set` of `property` (a URI)
    /// to `path` at once, in a run of its own on silence, and runs the work the plugin
    /// schedules (loading the file) before returning, so the file plays from the first frame
    /// of the next render, the same at any block size. The node sends it again whenever it
    /// instantiates the plugin anew (another sample rate). Call it on the control side while
    /// the node is not rendering.
    public func setFile(_ path: String, forProperty property: String) {
        files.removeAll { $0.property == property }
        files.append((property, path))
        if let instance { deliverFile(path, forProperty: property, to: instance) }
    }

    /// Runs the plugin once on silence with `patch:Set` in its control input, then the work it
    /// scheduled; what it played is dropped.
    func deliverFile(_ path: String, forProperty property: String, to instance: UnsafeMutablePointer<LilvInstance>) {
        guard let target = midiBuffer ?? atomInputs.first?.buffer else { return }
        let capacity = midiBuffer != nil ? midiCapacity : atomInputs[0].capacity
        guard LV2SliceEvents.writeFileMessage(path, forProperty: property, into: target, capacity: capacity, features: features) else {
            logHandler?(info.name, .error, "the path \(path) is too long for the plugin's control input")
            return
        }
        for buffer in audioIn { buffer.update(repeating: 0, count: grid) }
        prepareAtomPorts(except: target)
        let handle = instance.pointee.lv2_handle
        workingHere {
            instance.pointee.lv2_descriptor.pointee.run?(handle, UInt32(grid))
            features.worker.perform(handle: handle)
            features.worker.drain(handle: handle)
        }
        flushLog()
        writeEmptySequence(into: target)
    }

    /// Sends the plugin `patch:Set` of `property` (a URI) to the file `path` while the node
    /// renders (any thread but the audio thread; one sender at a time): it arrives at the first
    /// frame of the next slice, in the input ``setFile(_:forProperty:)`` uses (the MIDI input,
    /// else the first other atom input), and the plugin loads the file in its worker, in the background
    /// when ``worksInBackground`` is on. Returns false when the message does not fit now
    /// (messages sent and not yet delivered fill 16 KiB). Not remembered for a new instance:
    /// ``setFile(_:forProperty:)`` is.
    @discardableResult
    public func sendFile(_ path: String, forProperty property: String) -> Bool {
        let header = MemoryLayout<LV2_Atom_Sequence>.size
        let size = 1 << 14
        let forged = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { forged.deallocate() }
        guard LV2SliceEvents.writeFileMessage(path, forProperty: property, into: forged, capacity: size, features: features) else { return false }
        let total = Int(forged.load(as: LV2_Atom.self).size) + MemoryLayout<LV2_Atom>.size - header
        return messageRing.write(size: UInt32(total), data: forged + header)
    }
}
