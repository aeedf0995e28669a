// (i / inner) % channels, the channel of element i along a tensor's axis,
// for the consecutive elements one invocation takes (int_io.glsl asks for
// them in order): the first by division, each next from the one before by a
// step. H100, resnet50 a16w8 at batch 8: its rescale_joins (three channels
// an element) 816 -> 769 us; its plain rescales unchanged (738 -> 742 us, still
// ~1.4 TB/s against 2.1-2.2 for an i32 add: their time is not the division).
#ifndef GPUU_CHANNEL_WALK
#define GPUU_CHANNEL_WALK

struct ChannelWalk {
  uint i;    // the last element asked for (~0u: none yet)
  uint pos;  // its place in its channel's run of `inner`
  uint c;    // its channel
};
#define CHANNEL_WALK_START ChannelWalk(0xFFFFFFFFu, 0u, 0u)

uint walk_channel(inout ChannelWalk w, uint i, uint inner, uint channels) {
  if (w.i != 0xFFFFFFFFu && i == w.i + 1u) {
    if (++w.pos == inner) {
      w.pos = 0u;
      if (++w.c == channels) w.c = 0u;
    }
  } else {
    const uint q = i / inner;
    w.pos = i - q * inner;
    w.c = q % channels;
  }
  w.i = i;
  return w.c;
}

#endif
