// The umbrella module: one `import Tactus` brings the whole public API of the library products.
@_exported import ALSA
@_exported import AudioEffects
@_exported import AudioFileOutput
@_exported import AudioGraph
@_exported import BatchRender
@_exported import Instruments
@_exported import JACK
@_exported import LV2
@_exported import MIDI
@_exported import MIDIFile
@_exported import Playback
@_exported import Recording
@_exported import Sampler
@_exported import Sequencing
@_exported import SFZ
@_exported import SFZPlayback
@_exported import SoundFont
