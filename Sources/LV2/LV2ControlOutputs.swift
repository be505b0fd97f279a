import Foundation
import Synchronization

extension LV2PluginNode {
    /// The value the plugin last wrote to its control output `name` (the port's symbol, or
    /// its name without regard to case; ``LV2PluginInfo/controlOutputs`` lists them): as the
    /// last slice the plugin ran left it, a slice reading each parameter at its last frame
    /// (see the type's discussion), or as the run that measured its latency left it. Safe to
    /// call from any thread while the node renders: a meter can be read live.
    /// - Throws: ``LV2Error/unknownControlOutput(plugin:name:outputs:)`` naming the plugin's
    ///   control outputs.
    public func controlOutputValue(_ name: String) throws(LV2Error) -> Float {
        let outputs = info.controlOutputs
        guard let k = outputs.firstIndex(where: { $0.symbol == name })
            ?? outputs.firstIndex(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
            throw .unknownControlOutput(plugin: info.name, name: name, outputs: outputs.map(\.symbol))
        }
        return Float(bitPattern: controlOutputValues[k].load(ordering: .relaxed))
    }
}
