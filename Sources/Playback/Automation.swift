import AudioGraph
import Sequencing

extension AudioGraph {
    /// The address of the parameter called `name` (without regard to case) of node `node`,
    /// for automation lanes and parameter events. Throws `AudioGraphError.unknownNode(_:)`
    /// or `AudioGraphError.unknownParameter(node:name:)`.
    public func parameterAddress(node: UInt32, named name: String) throws(AudioGraphError) -> ParameterAddress {
        ParameterAddress(node: node, parameter: try parameterID(node: node, named: name))
    }

    /// The address of parameter `id` of node `node`, checked against the node's declarations.
    public func parameterAddress(node: UInt32, id: UInt32) throws(AudioGraphError) -> ParameterAddress {
        guard let n = self.node(node) else { throw AudioGraphError.unknownNode(node) }
        guard n.parameterInfo(id) != nil else { throw AudioGraphError.unknownParameter(node: node, name: "#\(id)") }
        return ParameterAddress(node: node, parameter: id)
    }
}
