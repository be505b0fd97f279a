import AudioGraph
import Instruments
import Sampler
import Sequencing

extension DefaultInstrument {
    /// The instrument with `draw`'s reverb and chorus factors applied to its levels (as they
    /// are set, so a reverb already switched off stays off): the sampler's reverb and chorus,
    /// the built-in synthesizer's reverb (it has no chorus). Without a draw, or with factors of
    /// 1, or for another node (whose levels Tactus does not know), the instrument as it is.
    /// Call it once per instrument made.
    public func applyingEffectFactors(of draw: AugmentationDraw?) -> DefaultInstrument {
        guard let draw, draw.reverbFactor != 1 || draw.chorusFactor != 1 else { return self }
        func scale(_ node: some ParameterizedNode, _ id: UInt32, by factor: Double) {
            guard factor != 1, let level = node.parameterValue(id, scope: .global, element: 0) else { return }
            node.setParameter(id, value: level * Float(factor), scope: .global, element: 0)
        }
        switch self {
        case .sampler(let sampler):
            scale(sampler, SamplerNode.Parameter.reverbLevel, by: draw.reverbFactor)
            scale(sampler, SamplerNode.Parameter.chorusLevel, by: draw.chorusFactor)
            return self
        case .synthesizer(let synthesizer):
            scale(synthesizer, GMSynthesizer.Parameter.reverbLevel, by: draw.reverbFactor)
            return self
        case .builtIn:
            let synthesizer = GMSynthesizer()
            scale(synthesizer, GMSynthesizer.Parameter.reverbLevel, by: draw.reverbFactor)
            return .synthesizer(synthesizer)
        case .node:
            return self
        }
    }
}
