#!/usr/bin/env python3
"""Writes small ONNX versions of common CNN architectures for the real-network comparison.

PyTorch is not available here, so each graph is written with onnx.helper in the shape that
torch.onnx.export gives torchvision's models (Conv+BatchNormalization+Relu, Clip for ReLU6,
Sigmoid+Mul for SiLU, Flatten+Gemm heads, Shape->Gather->Unsqueeze->Concat->Reshape for
x.view(x.size(0), -1), Split for chunk, ...). Width, depth and resolution are reduced so that
each model runs in well under a second on a CPU, but every architecture keeps its
characteristic blocks. Weights are random from a fixed seed, so the output is reproducible.

usage: make_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Graph:
    """Accumulates nodes and initializers; every helper returns its output tensor name."""

    def __init__(self, name, seed, opset=13):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.opset = opset
        self.nodes = []
        self.inits = []
        self.inputs = []
        self.outputs = []
        self.count = 0

    def uid(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, array, prefix="c"):
        array = np.asarray(array)
        name = self.uid(prefix)
        tensor = numpy_helper.from_array(array, name)
        if array.dtype == np.int64 or array.size <= 8:
            # torch writes shapes, indices and scalars as Constant nodes, weights as initializers.
            self.nodes.append(helper.make_node("Constant", [], [name], name=self.uid("Constant"),
                                               value=tensor))
        else:
            self.inits.append(tensor)
        return name

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.uid(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.uid(op), **attrs))
        return outs[0] if n_out == 1 else outs

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def output(self, tensor, name):
        # Rename the producer's output (as torch does) rather than adding an Identity.
        for node in self.nodes:
            for seq in (node.input, node.output):
                for i, t in enumerate(seq):
                    if t == tensor:
                        seq[i] = name
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
        return name

    # --- layers -------------------------------------------------------------------------------
    def conv(self, x, cin, cout, k, stride=1, pad=None, group=1, bias=True, dilation=1, std=None):
        kh, kw = (k, k) if isinstance(k, int) else k
        if pad is None:
            pad = (dilation * (kh - 1) // 2, dilation * (kw - 1) // 2)
        elif isinstance(pad, int):
            pad = (pad, pad)
        fan_in = cin // group * kh * kw
        std = np.sqrt(2.0 / fan_in) if std is None else std  # He init unless given
        w = self.rng.normal(0, std, (cout, cin // group, kh, kw))
        ins = [x, self.const(w.astype(np.float32), "w")]
        if bias:
            ins.append(self.const(self.rng.normal(0, 0.1, cout).astype(np.float32), "b"))
        return self.node("Conv", ins, kernel_shape=[kh, kw], strides=[stride, stride],
                         pads=[pad[0], pad[1], pad[0], pad[1]], group=group,
                         dilations=[dilation, dilation])

    def bn(self, x, c):
        r = self.rng
        params = [r.uniform(0.5, 1.5, c), r.normal(0, 0.1, c), r.normal(0, 0.1, c),
                  r.uniform(0.5, 1.5, c)]
        return self.node("BatchNormalization",
                         [x] + [self.const(p.astype(np.float32), "bn") for p in params],
                         epsilon=1e-5, momentum=0.9)

    def relu(self, x):
        return self.node("Relu", [x])

    def relu6(self, x):
        # torch exports F.relu6 / nn.ReLU6 as Clip(x, 0, 6): min/max are inputs from opset 11,
        # attributes before.
        if self.opset < 11:
            return self.node("Clip", [x], min=0.0, max=6.0)
        return self.node("Clip", [x, self.const(np.float32(0)), self.const(np.float32(6))])

    def hardswish(self, x):
        # nn.Hardswish is the HardSwish op from opset 14, x * HardSigmoid(x) before.
        if self.opset >= 14:
            return self.node("HardSwish", [x])
        return self.node("Mul", [x, self.node("HardSigmoid", [x], alpha=1 / 6, beta=0.5)])

    def silu(self, x):
        return self.node("Mul", [x, self.node("Sigmoid", [x])])

    def conv_bn_act(self, x, cin, cout, k, stride=1, group=1, act="relu", pad=None):
        y = self.bn(self.conv(x, cin, cout, k, stride, pad=pad, group=group, bias=False), cout)
        if act == "relu":
            return self.relu(y)
        if act == "relu6":
            return self.relu6(y)
        if act == "silu":
            return self.silu(y)
        if act == "hswish":
            return self.hardswish(y)
        return y

    def maxpool(self, x, k, s, p=0, ceil=0):
        return self.node("MaxPool", [x], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                         ceil_mode=ceil)

    def avgpool(self, x, k, s, p=0, ceil=0, include_pad=0):
        return self.node("AveragePool", [x], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                         ceil_mode=ceil, count_include_pad=include_pad)

    def gemm(self, x, cin, cout):
        w = self.rng.normal(0, np.sqrt(1.0 / cin), (cout, cin)).astype(np.float32)
        b = self.rng.normal(0, 0.1, cout).astype(np.float32)
        return self.node("Gemm", [x, self.const(w, "fc_w"), self.const(b, "fc_b")], alpha=1.0,
                         beta=1.0, transB=1)

    def flatten(self, x):
        return self.node("Flatten", [x], axis=1)

    def view_flatten(self, x):
        """x.view(x.size(0), -1) as older torch exports write it."""
        shape = self.node("Shape", [x])
        n = self.node("Gather", [shape, self.const(np.int64(0))], axis=0)
        n1 = self.unsqueeze(n, [0])
        minus1 = self.const(np.array([-1], np.int64))
        target = self.node("Concat", [n1, minus1], axis=0)
        return self.node("Reshape", [x, target])

    def unsqueeze(self, x, axes):
        if self.opset >= 13:
            return self.node("Unsqueeze", [x, self.const(np.array(axes, np.int64))])
        return self.node("Unsqueeze", [x], axes=axes)

    def squeeze(self, x, axes):
        if self.opset >= 13:
            return self.node("Squeeze", [x, self.const(np.array(axes, np.int64))])
        return self.node("Squeeze", [x], axes=axes)

    def split(self, x, sizes, axis):
        if self.opset >= 13:
            return self.node("Split", [x, self.const(np.array(sizes, np.int64))],
                             n_out=len(sizes), axis=axis)
        return self.node("Split", [x], n_out=len(sizes), axis=axis, split=sizes)

    def dropout(self, x):
        return self.node("Dropout", [x]) if self.opset >= 12 else self.node("Dropout", [x],
                                                                            ratio=0.2)

    def classifier(self, x, cin, classes, view=False):
        y = self.node("GlobalAveragePool", [x])
        y = self.view_flatten(y) if view else self.flatten(y)
        return self.gemm(self.dropout(y), cin, classes)

    def save(self, out_dir, boxes_inputs=None, initializers_as_inputs=False):
        inputs = list(self.inputs)
        if initializers_as_inputs:  # torch < 1.5 (keep_initializers_as_inputs) listed weights too
            inputs += [helper.make_tensor_value_info(t.name, t.data_type, t.dims)
                       for t in self.inits]
        graph = helper.make_graph(self.nodes, self.name, inputs, self.outputs, self.inits)
        model = helper.make_model(graph, producer_name="kiln-real-networks",
                                  opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        # compare.py reads this to feed valid boxes (x1 < x2, y1 < y2 inside the image).
        for name, size in (boxes_inputs or {}).items():
            helper.set_model_props(model, {"boxes_input:" + name: str(size)})
        # Give the outputs their inferred shapes, as torch.onnx.export does.
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
        for out in model.graph.output:
            out.CopyFrom(known[out.name])
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(out_dir, self.name + ".onnx"))


# --- architectures ------------------------------------------------------------------------------
def resnet(out_dir):
    """ResNet-18/50/ResNeXt style: 7x7 stem, BasicBlocks, Bottlenecks (one grouped) with 1x1
    downsample, x.view(x.size(0), -1) head."""
    g = Graph("resnet", 1001, opset=13)
    x = g.input("input", [2, 3, 64, 64])
    x = g.maxpool(g.conv_bn_act(x, 3, 16, 7, 2), 3, 2, 1)

    def basic(x, cin, cout, stride):
        y = g.conv_bn_act(x, cin, cout, 3, stride)
        y = g.conv_bn_act(y, cout, cout, 3, act=None)
        if stride != 1 or cin != cout:
            x = g.conv_bn_act(x, cin, cout, 1, stride, act=None)
        return g.relu(g.node("Add", [y, x]))

    def bottleneck(x, cin, width, stride, groups=1):
        cout = width * 4
        y = g.conv_bn_act(x, cin, width, 1)
        y = g.conv_bn_act(y, width, width, 3, stride, group=groups)
        y = g.conv_bn_act(y, width, cout, 1, act=None)
        if stride != 1 or cin != cout:
            x = g.conv_bn_act(x, cin, cout, 1, stride, act=None)
        return g.relu(g.node("Add", [y, x]))

    x = basic(x, 16, 16, 1)
    x = basic(x, 16, 16, 1)
    x = basic(x, 16, 32, 2)
    x = bottleneck(x, 32, 16, 2)
    x = bottleneck(x, 64, 16, 1, groups=4)  # ResNeXt: grouped 3x3 (neither dense nor depthwise)
    g.output(g.classifier(x, 64, 10, view=True), "logits")
    g.save(out_dir)


def mobilenet_v2(out_dir, opset=11, name="mobilenet_v2", old_exporter=False):
    """MobileNetV2: ReLU6 as Clip, inverted residuals with depthwise 3x3 (group=C)."""
    g = Graph(name, 1002, opset=opset)
    x = g.input("input", [1, 3, 64, 64])
    x = g.conv_bn_act(x, 3, 16, 3, 2, act="relu6")

    def inverted(x, cin, cout, stride, t):
        hidden = cin * t
        y = x
        if t != 1:
            y = g.conv_bn_act(y, cin, hidden, 1, act="relu6")
        y = g.conv_bn_act(y, hidden, hidden, 3, stride, group=hidden, act="relu6")
        y = g.conv_bn_act(y, hidden, cout, 1, act=None)
        return g.node("Add", [x, y]) if stride == 1 and cin == cout else y

    for cin, cout, s, t in [(16, 8, 1, 1), (8, 12, 2, 6), (12, 12, 1, 6), (12, 16, 2, 6),
                            (16, 16, 1, 6), (16, 24, 1, 6)]:
        x = inverted(x, cin, cout, s, t)
    x = g.conv_bn_act(x, 24, 64, 1, act="relu6")
    y = g.node("GlobalAveragePool", [x])
    y = g.flatten(y)
    g.output(g.gemm(g.dropout(y), 64, 10), "logits")
    g.save(out_dir, initializers_as_inputs=old_exporter)


def mobilenet_v2_opset9(out_dir):
    """The same network as an old exporter writes it: Clip and Dropout with attributes, weights
    listed as graph inputs too."""
    mobilenet_v2(out_dir, opset=9, name="mobilenet_v2_opset9", old_exporter=True)


def mobilenet_v1_tf(out_dir):
    """MobileNetV1 as tf2onnx writes a TensorFlow model: NHWC input transposed to NCHW, convs with
    auto_pad SAME_UPPER (asymmetric at stride 2), BN folded into conv biases, ReLU6 as Clip,
    AveragePool over the whole map, Squeeze, MatMul+Add and Softmax."""
    g = Graph("mobilenet_v1_tf", 1013, opset=13)
    x = g.input("input:0", [1, 64, 64, 3])  # tf2onnx keeps TensorFlow's tensor names
    x = g.node("Transpose", [x], perm=[0, 3, 1, 2])

    def conv_same(x, cin, cout, k, stride, group=1):
        w = g.rng.normal(0, np.sqrt(2.0 / (cin // group * k * k)), (cout, cin // group, k, k))
        b = g.rng.normal(0, 0.1, cout)
        y = g.node("Conv", [x, g.const(w.astype(np.float32)), g.const(b.astype(np.float32))],
                   kernel_shape=[k, k], strides=[stride, stride], group=group,
                   auto_pad="SAME_UPPER")
        return g.relu6(y)

    x = conv_same(x, 3, 16, 3, 2)                                                    # 32
    for cin, cout, stride in [(16, 32, 1), (32, 48, 2), (48, 48, 1), (48, 64, 2), (64, 96, 2)]:
        x = conv_same(x, cin, cin, 3, stride, group=cin)
        x = conv_same(x, cin, cout, 1, 1)
    x = g.avgpool(x, 4, 4)                                                           # 1x1
    x = g.squeeze(x, [2, 3])
    w = g.rng.normal(0, np.sqrt(1.0 / 96), (96, 10)).astype(np.float32)
    x = g.node("Add", [g.node("MatMul", [x, g.const(w)]),
                       g.const(g.rng.normal(0, 0.1, 10).astype(np.float32))])
    g.output(g.node("Softmax", [x], axis=-1), "MobilenetV1/Predictions/Softmax:0")
    g.save(out_dir)


def mobilenet_v3(out_dir):
    """MobileNetV3-Small style: HardSwish, SE with ReLU and HardSigmoid, 5x5 depthwise convs."""
    g = Graph("mobilenet_v3", 1011, opset=14)
    x = g.input("input", [1, 3, 64, 64])
    x = g.conv_bn_act(x, 3, 16, 3, 2, act="hswish")

    def se(x, c, squeeze):
        s = g.node("GlobalAveragePool", [x])
        s = g.relu(g.conv(s, c, squeeze, 1))
        s = g.node("HardSigmoid", [g.conv(s, squeeze, c, 1)], alpha=1 / 6, beta=0.5)
        return g.node("Mul", [s, x])

    def block(x, cin, hidden, cout, k, stride, use_se, act):
        y = x if hidden == cin else g.conv_bn_act(x, cin, hidden, 1, act=act)
        y = g.conv_bn_act(y, hidden, hidden, k, stride, group=hidden, act=act)
        if use_se:
            y = se(y, hidden, max(8, hidden // 4))
        y = g.conv_bn_act(y, hidden, cout, 1, act=None)
        return g.node("Add", [y, x]) if stride == 1 and cin == cout else y

    for cin, hidden, cout, k, s, use_se, act in [
            (16, 16, 16, 3, 2, True, "relu"), (16, 48, 24, 3, 2, False, "relu"),
            (24, 64, 24, 3, 1, False, "relu"), (24, 96, 32, 5, 2, True, "hswish"),
            (32, 128, 32, 5, 1, True, "hswish")]:
        x = block(x, cin, hidden, cout, k, s, use_se, act)
    x = g.conv_bn_act(x, 32, 128, 1, act="hswish")
    y = g.flatten(g.node("GlobalAveragePool", [x]))
    y = g.dropout(g.hardswish(g.gemm(y, 128, 256)))
    g.output(g.gemm(y, 256, 10), "logits")
    g.save(out_dir)


def squeezenet(out_dir):
    """SqueezeNet 1.1: MaxPool with ceil_mode, Fire modules (squeeze, expand 1x1|3x3, Concat)."""
    g = Graph("squeezenet", 1003, opset=13)
    x = g.input("input", [1, 3, 67, 67])
    x = g.relu(g.conv(x, 3, 24, 3, 2, pad=0))
    x = g.maxpool(x, 3, 2, ceil=1)

    def fire(x, cin, squeeze, expand):
        s = g.relu(g.conv(x, cin, squeeze, 1))
        e1 = g.relu(g.conv(s, squeeze, expand, 1))
        e3 = g.relu(g.conv(s, squeeze, expand, 3))
        return g.node("Concat", [e1, e3], axis=1)

    x = fire(x, 24, 8, 16)
    x = fire(x, 32, 8, 16)
    x = g.maxpool(x, 3, 2, ceil=1)
    x = fire(x, 32, 12, 24)
    x = fire(x, 48, 12, 24)
    x = g.maxpool(x, 3, 2, ceil=1)
    x = fire(x, 48, 16, 32)
    x = g.dropout(x)
    x = g.relu(g.conv(x, 64, 10, 1))
    x = g.node("GlobalAveragePool", [x])
    logits = g.output(g.flatten(x), "logits")
    g.output(g.node("Softmax", [logits], axis=1), "probs")
    g.save(out_dir)


def densenet(out_dir):
    """DenseNet-121 style: pre-activation dense layers, Concat growth, transition AvgPool."""
    g = Graph("densenet", 1004, opset=13)
    x = g.input("input", [1, 3, 64, 64])
    x = g.maxpool(g.conv_bn_act(x, 3, 16, 7, 2), 3, 2, 1)
    growth, bn_size = 8, 4

    def dense_layer(x, cin):
        y = g.relu(g.bn(x, cin))
        y = g.conv(y, cin, bn_size * growth, 1, bias=False)
        y = g.relu(g.bn(y, bn_size * growth))
        return g.conv(y, bn_size * growth, growth, 3, bias=False)

    def dense_block(x, cin, layers):
        feats = [x]
        for i in range(layers):
            inp = feats[0] if len(feats) == 1 else g.node("Concat", feats, axis=1)
            feats.append(dense_layer(inp, cin + i * growth))
        return g.node("Concat", feats, axis=1), cin + layers * growth

    def transition(x, cin, cout):
        y = g.conv(g.relu(g.bn(x, cin)), cin, cout, 1, bias=False)
        return g.avgpool(y, 2, 2)

    x, c = dense_block(x, 16, 3)
    x = transition(x, c, c // 2)
    x, c = dense_block(x, c // 2, 3)
    x = transition(x, c, c // 2)
    x, c = dense_block(x, c // 2, 2)
    x = g.relu(g.bn(x, c))
    x = g.flatten(g.node("GlobalAveragePool", [x]))
    g.output(g.gemm(x, c, 10), "logits")
    g.save(out_dir)


def googlenet(out_dir):
    """GoogLeNet (transform_input, ceil_mode pools, 4-branch inception) plus an Inception-v3
    block (1x7/7x1 factorised convs, AveragePool with count_include_pad)."""
    g = Graph("googlenet", 1005, opset=13)
    x = g.input("input", [1, 3, 64, 64])
    # transform_input: x[:, i] * (std_i / 0.5) + (mean_i - 0.5) / 0.5, unsqueezed and concatenated.
    chans = []
    for i, (m, s) in enumerate([(0.485, 0.229), (0.456, 0.224), (0.406, 0.225)]):
        ch = g.unsqueeze(g.node("Gather", [x, g.const(np.int64(i))], axis=1), [1])
        ch = g.node("Mul", [ch, g.const(np.float32(s / 0.5))])
        chans.append(g.node("Add", [ch, g.const(np.float32((m - 0.5) / 0.5))]))
    x = g.node("Concat", chans, axis=1)
    x = g.maxpool(g.conv_bn_act(x, 3, 16, 7, 2), 3, 2, ceil=1)
    x = g.conv_bn_act(x, 16, 16, 1)
    x = g.maxpool(g.conv_bn_act(x, 16, 32, 3), 3, 2, ceil=1)

    def inception(x, cin, c1, c3r, c3, c5r, c5, pp):
        b1 = g.conv_bn_act(x, cin, c1, 1)
        b2 = g.conv_bn_act(g.conv_bn_act(x, cin, c3r, 1), c3r, c3, 3)
        b3 = g.conv_bn_act(g.conv_bn_act(x, cin, c5r, 1), c5r, c5, 3)
        b4 = g.conv_bn_act(g.maxpool(x, 3, 1, 1, ceil=1), cin, pp, 1)
        return g.node("Concat", [b1, b2, b3, b4], axis=1), c1 + c3 + c5 + pp

    x, c = inception(x, 32, 8, 12, 16, 4, 8, 8)
    x, c = inception(x, c, 16, 16, 24, 4, 12, 8)
    x = g.maxpool(x, 3, 2, ceil=1)

    def inception_v3_c(x, cin, c7):
        b1 = g.conv_bn_act(x, cin, 16, 1)
        b7 = g.conv_bn_act(x, cin, c7, 1)
        b7 = g.conv_bn_act(b7, c7, c7, (1, 7), pad=(0, 3))
        b7 = g.conv_bn_act(b7, c7, 16, (7, 1), pad=(3, 0))
        bd = g.conv_bn_act(x, cin, c7, 1)
        bd = g.conv_bn_act(bd, c7, c7, (7, 1), pad=(3, 0))
        bd = g.conv_bn_act(bd, c7, 16, (1, 7), pad=(0, 3))
        bp = g.conv_bn_act(g.avgpool(x, 3, 1, 1, include_pad=1), cin, 16, 1)
        return g.node("Concat", [b1, b7, bd, bp], axis=1), 64

    x, c = inception_v3_c(x, c, 12)
    g.output(g.classifier(x, c, 10), "logits")
    g.save(out_dir)


def shufflenet_v2(out_dir):
    """ShuffleNetV2: Split (chunk), two-branch units, channel shuffle as Reshape/Transpose/Reshape
    with the batch size taken from Shape the way a traced x.size() exports it."""
    g = Graph("shufflenet_v2", 1006, opset=13)
    x = g.input("input", [2, 3, 64, 64])
    x = g.maxpool(g.conv_bn_act(x, 3, 12, 3, 2), 3, 2, 1)

    def shuffle(x, c, h, w, groups=2):
        shape = g.node("Shape", [x])
        n = g.unsqueeze(g.node("Gather", [shape, g.const(np.int64(0))], axis=0), [0])
        s1 = g.node("Concat", [n, g.const(np.array([groups, c // groups, h, w], np.int64))],
                    axis=0)
        y = g.node("Reshape", [x, s1])
        y = g.node("Transpose", [y], perm=[0, 2, 1, 3, 4])
        s2 = g.node("Concat", [n, g.const(np.array([-1, h, w], np.int64))], axis=0)
        return g.node("Reshape", [y, s2])

    def branch2(x, cin, c, stride):
        y = g.conv_bn_act(x, cin, c, 1)
        y = g.conv_bn_act(y, c, c, 3, stride, group=c, act=None)
        return g.conv_bn_act(y, c, c, 1)

    def unit(x, cin, cout, stride, hw):
        c = cout // 2
        if stride == 1:
            x1, x2 = g.split(x, [c, c], 1)
            out = g.node("Concat", [x1, branch2(x2, c, c, 1)], axis=1)
        else:
            b1 = g.conv_bn_act(x, cin, cin, 3, stride, group=cin, act=None)
            b1 = g.conv_bn_act(b1, cin, c, 1)
            out = g.node("Concat", [b1, branch2(x, cin, c, stride)], axis=1)
        return shuffle(out, cout, hw, hw)

    x = unit(x, 12, 24, 2, 8)
    x = unit(x, 24, 24, 1, 8)
    x = unit(x, 24, 48, 2, 4)
    x = unit(x, 48, 48, 1, 4)
    x = unit(x, 48, 48, 1, 4)
    x = g.conv_bn_act(x, 48, 96, 1)
    x = g.node("ReduceMean", [x], axes=[2, 3], keepdims=0)  # x.mean([2, 3])
    g.output(g.gemm(x, 96, 10), "logits")
    g.save(out_dir)


def efficientnet(out_dir):
    """EfficientNet-B0 style: SiLU as x*Sigmoid(x), MBConv with 3x3 and 5x5 depthwise convs,
    squeeze-excitation (GlobalAveragePool, 1x1 convs, Sigmoid, Mul), residual Add."""
    g = Graph("efficientnet", 1007, opset=17)
    x = g.input("input", [2, 3, 64, 64])
    # TF-ported weights (timm's tf_ variants) pad "SAME" asymmetrically with an explicit Pad.
    x = g.node("Pad", [x, g.const(np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64))], mode="constant")
    x = g.conv_bn_act(x, 3, 16, 3, 2, act="silu", pad=0)

    def se(x, c, squeeze):
        s = g.node("GlobalAveragePool", [x])
        s = g.silu(g.conv(s, c, squeeze, 1))
        s = g.node("Sigmoid", [g.conv(s, squeeze, c, 1)])
        return g.node("Mul", [s, x])

    def mbconv(x, cin, cout, k, stride, t):
        hidden = cin * t
        y = x if t == 1 else g.conv_bn_act(x, cin, hidden, 1, act="silu")
        y = g.conv_bn_act(y, hidden, hidden, k, stride, group=hidden, act="silu")
        y = se(y, hidden, max(1, cin // 4))
        y = g.conv_bn_act(y, hidden, cout, 1, act=None)
        return g.node("Add", [y, x]) if stride == 1 and cin == cout else y

    for cin, cout, k, s, t in [(16, 8, 3, 1, 1), (8, 12, 3, 2, 6), (12, 12, 3, 1, 6),
                               (12, 20, 5, 2, 6), (20, 20, 5, 1, 6), (20, 32, 3, 2, 6)]:
        x = mbconv(x, cin, cout, k, s, t)
    x = g.conv_bn_act(x, 32, 128, 1, act="silu")
    g.output(g.classifier(x, 128, 10), "logits")
    g.save(out_dir)


def vgg(out_dir):
    """VGG-11(-BN): 3x3 conv stacks, 2x2 max pools, Flatten and a Gemm/Relu/Dropout classifier."""
    g = Graph("vgg", 1008, opset=13)
    x = g.input("input", [1, 3, 64, 64])
    c = 3
    for i, v in enumerate([16, "M", 32, "M", 32, 32, "M", 64, 64, "M"]):
        if v == "M":
            x = g.maxpool(x, 2, 2)
        else:
            x = g.conv(x, c, v, 3)
            x = g.relu(g.bn(x, v) if i >= 4 else x)
            c = v
    x = g.flatten(x)
    x = g.dropout(g.relu(g.gemm(x, 64 * 4 * 4, 128)))
    x = g.dropout(g.relu(g.gemm(x, 128, 128)))
    g.output(g.gemm(x, 128, 10), "logits")
    g.save(out_dir)


def deeplab(out_dir):
    """DeepLabV3/FCN style segmentation: dilated residual convs, ASPP (1x1, dilated 3x3, image
    pooling upsampled back with Resize), a learned ConvTranspose upsampling and the final
    F.interpolate(bilinear, align_corners=False) as Resize linear with pytorch_half_pixel."""
    g = Graph("deeplab", 1012, opset=13)
    x = g.input("input", [1, 3, 64, 64])
    x = g.maxpool(g.conv_bn_act(x, 3, 16, 7, 2), 3, 2, 1)                           # 16
    x = g.conv_bn_act(x, 16, 32, 3, 2)                                               # 8
    # A dilated residual block, as replace_stride_with_dilation makes them.
    y = g.relu(g.bn(g.conv(x, 32, 32, 3, bias=False, dilation=2), 32))
    y = g.bn(g.conv(y, 32, 32, 3, bias=False, dilation=2), 32)
    x = g.relu(g.node("Add", [y, x]))

    def resize_to(t, hw, mode):
        nc = g.node("Slice", [g.node("Shape", [t]), g.const(np.array([0], np.int64)),
                              g.const(np.array([2], np.int64))])
        sizes = g.node("Concat", [nc, g.const(np.array(hw, np.int64))], axis=0)
        attrs = dict(mode=mode, coordinate_transformation_mode="pytorch_half_pixel")
        if mode == "nearest":
            attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        return g.node("Resize", [t, g.const(np.zeros(0, np.float32)),
                                 g.const(np.zeros(0, np.float32)), sizes], **attrs)

    branches = [g.conv_bn_act(x, 32, 16, 1)]
    for rate in (2, 3):
        branches.append(g.relu(g.bn(g.conv(x, 32, 16, 3, bias=False, dilation=rate), 16)))
    pooled = g.conv_bn_act(g.node("GlobalAveragePool", [x]), 32, 16, 1)
    branches.append(resize_to(pooled, [8, 8], "linear"))
    x = g.conv_bn_act(g.node("Concat", branches, axis=1), 64, 32, 1)
    x = g.dropout(x)
    # FCN-style learned 2x upsampling.
    w = g.rng.normal(0, np.sqrt(2.0 / (32 * 4 * 4)), (32, 16, 4, 4)).astype(np.float32)
    x = g.relu(g.node("ConvTranspose", [x, g.const(w), g.const(np.zeros(16, np.float32) + 0.1)],
                      kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]))      # 16
    x = g.conv(x, 16, 6, 1)
    g.output(resize_to(x, [64, 64], "linear"), "out")
    g.save(out_dir)


def ssd(out_dir):
    """SSD-lite detector: MobileNet-ish backbone, extra layers, per-scale loc/conf heads flattened
    with Transpose+Reshape, Concat over scales, Softmax scores and box decoding against priors."""
    g = Graph("ssd", 1009, opset=13)
    x = g.input("image", [1, 3, 96, 96])
    x = g.conv_bn_act(x, 3, 16, 3, 2, act="relu6")                                   # 48
    x = g.conv_bn_act(x, 16, 16, 3, 1, group=16, act="relu6")
    x = g.conv_bn_act(x, 16, 24, 1, act="relu6")
    x = g.conv_bn_act(x, 24, 24, 3, 2, group=24, act="relu6")                        # 24
    x = g.conv_bn_act(x, 24, 32, 1, act="relu6")
    f1 = g.conv_bn_act(g.conv_bn_act(x, 32, 32, 3, 2, group=32, act="relu6"), 32, 48, 1,
                       act="relu6")                                                  # 12
    f2 = g.conv_bn_act(g.conv_bn_act(f1, 48, 48, 3, 2, group=48, act="relu6"), 48, 64, 1,
                       act="relu6")                                                  # 6
    f3 = g.relu(g.conv(g.relu(g.conv(f2, 64, 32, 1)), 32, 64, 3, 2))                 # 3
    f4 = g.relu(g.conv(g.relu(g.conv(f3, 64, 32, 1)), 32, 64, 3, 1, pad=0))          # 1
    classes = 5
    feats = [(f1, 48, 12, 4), (f2, 64, 6, 6), (f3, 64, 3, 6), (f4, 64, 1, 4)]
    locs, confs, priors = [], [], []
    for i, (f, c, hw, anchors) in enumerate(feats):
        loc = g.conv(f, c, anchors * 4, 3)
        loc = g.node("Transpose", [loc], perm=[0, 2, 3, 1])
        locs.append(g.node("Reshape", [loc, g.const(np.array([1, -1, 4], np.int64))]))
        conf = g.conv(f, c, anchors * classes, 3)
        conf = g.node("Transpose", [conf], perm=[0, 2, 3, 1])
        confs.append(g.node("Reshape", [conf, g.const(np.array([1, -1, classes], np.int64))]))
        # Priors (cx, cy, w, h), generated offline as SSD's PriorBox does.
        cy, cx = np.meshgrid((np.arange(hw) + 0.5) / hw, (np.arange(hw) + 0.5) / hw,
                             indexing="ij")
        sizes = 0.1 + 0.2 * i + 0.05 * np.arange(anchors)
        for_cell = np.stack(
            [np.broadcast_to(cx[..., None], (hw, hw, anchors)),
             np.broadcast_to(cy[..., None], (hw, hw, anchors)),
             np.broadcast_to(sizes, (hw, hw, anchors)),
             np.broadcast_to(sizes[::-1], (hw, hw, anchors))], -1)
        priors.append(for_cell.reshape(-1, 4))
    loc = g.node("Concat", locs, axis=1)
    conf = g.node("Concat", confs, axis=1)
    prior = np.concatenate(priors)[None].astype(np.float32)
    # Decode: xy = p_xy + 0.1 * l_xy * p_wh, wh = p_wh * exp(0.2 * l_wh), then corners.
    l_xy, l_wh = g.split(loc, [2, 2], 2)
    p_xy, p_wh = g.const(prior[..., :2]), g.const(prior[..., 2:])
    xy = g.node("Add", [p_xy, g.node("Mul", [g.node("Mul", [l_xy, g.const(np.float32(0.1))]),
                                              p_wh])])
    wh = g.node("Mul", [p_wh, g.node("Exp", [g.node("Mul", [l_wh, g.const(np.float32(0.2))])])])
    half = g.node("Mul", [wh, g.const(np.float32(0.5))])
    boxes = g.node("Concat", [g.node("Sub", [xy, half]), g.node("Add", [xy, half])], axis=2)
    g.output(boxes, "boxes")
    g.output(g.node("Softmax", [conf], axis=-1), "scores")
    g.save(out_dir)


def faster_rcnn_head(out_dir):
    """Faster R-CNN: backbone, one FPN top-down step (nearest Resize), RPN head (objectness,
    deltas), RoiAlign over given proposals (batch of 2), TwoMLPHead, box predictor, Softmax."""
    g = Graph("faster_rcnn_head", 1010, opset=16)
    x = g.input("image", [2, 3, 64, 64])
    rois = g.input("rois", [6, 4])
    x = g.maxpool(g.conv_bn_act(x, 3, 16, 3, 2), 3, 2, 1)                          # 16
    x = g.conv_bn_act(x, 16, 32, 3, 1)
    c2 = g.relu(g.node("Add", [g.conv_bn_act(x, 32, 32, 3, act=None), x]))           # 16
    c3 = g.conv_bn_act(c2, 32, 48, 3, 2)                                             # 8
    # FPN top-down step: F.interpolate(top, size=lateral.shape[-2:], mode="nearest") exports as
    # Resize with sizes = Concat(Slice(Shape(top), 0, 2), [h, w]) and empty roi/scales.
    top = g.conv(c3, 48, 32, 1)
    lateral = g.conv(c2, 32, 32, 1)
    nc = g.node("Slice", [g.node("Shape", [top]), g.const(np.array([0], np.int64)),
                          g.const(np.array([2], np.int64)), g.const(np.array([0], np.int64))])
    sizes = g.node("Concat", [nc, g.const(np.array([16, 16], np.int64))], axis=0)
    up = g.node("Resize", [top, g.const(np.zeros(0, np.float32)),
                           g.const(np.zeros(0, np.float32)), sizes],
                mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor")
    feat = g.conv(g.node("Add", [lateral, up]), 32, 32, 3)
    # RPN head: shared 3x3 conv, objectness and box deltas, flattened per anchor.
    # torchvision's RPNHead initialises its convs with std 0.01, which keeps its outputs O(1).
    t = g.relu(g.conv(feat, 32, 32, 3, std=0.01))
    obj = g.node("Sigmoid", [g.conv(t, 32, 3, 1, std=0.01)])
    obj = g.node("Reshape", [g.node("Transpose", [obj], perm=[0, 2, 3, 1]),
                             g.const(np.array([2, -1], np.int64))])
    deltas = g.node("Transpose", [g.conv(t, 32, 12, 1, std=0.01)], perm=[0, 2, 3, 1])
    deltas = g.node("Reshape", [deltas, g.const(np.array([2, -1, 4], np.int64))])
    g.output(obj, "objectness")
    g.output(deltas, "rpn_deltas")
    # Second stage on the proposals (image coordinates, feature stride 4).
    batch_idx = g.const(np.array([0, 1, 1, 0, 1, 0], np.int64))
    pooled = g.node("RoiAlign", [feat, rois, batch_idx], mode="avg", output_height=4,
                    output_width=4, sampling_ratio=2, spatial_scale=0.25,
                    coordinate_transformation_mode="half_pixel")
    y = g.flatten(pooled)
    y = g.relu(g.gemm(y, 32 * 16, 64))
    y = g.relu(g.gemm(y, 64, 64))
    g.output(g.node("Softmax", [g.gemm(y, 64, 4)], axis=1), "class_probs")
    g.output(g.gemm(y, 64, 16), "box_regression")
    g.save(out_dir, boxes_inputs={"rois": 64})


MODELS = [resnet, mobilenet_v2, mobilenet_v2_opset9, mobilenet_v1_tf, mobilenet_v3, squeezenet,
          densenet, googlenet, shufflenet_v2, efficientnet, vgg, deeplab, ssd, faster_rcnn_head]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for make in MODELS:
        make(sys.argv[1])


if __name__ == "__main__":
    main()
