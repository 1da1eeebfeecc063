# A program of the kind of JAX's examples/mnist_classifier_fromscratch.py (jax-ml/jax,
# Apache-2.0): a tanh network (784-1024-1024-10) trained by plain SGD, with nothing but
# jax.numpy, grad and jit. Written for functrans's test suite; MNIST is replaced by a synthetic
# data set of MNIST's shapes drawn with numpy (labels from a fixed random linear teacher), and the
# run is shortened to 3 epochs of 4 batches.

import numpy as np
import numpy.random as npr

import jax
import jax.numpy as jnp
from jax import grad, jit
from jax.scipy.special import logsumexp

jax.config.update("jax_enable_x64", True)


def synthetic_mnist(num_train, num_test, seed=0):
    """Images in [0, 1) of 28 x 28 pixels, flattened, and one-hot labels of 10 classes."""
    rng = npr.RandomState(seed)
    teacher = rng.randn(28 * 28, 10)
    images = rng.rand(num_train + num_test, 28 * 28)
    labels = np.eye(10)[np.argmax((images - 0.5) @ teacher, axis=1)]
    return images[:num_train], labels[:num_train], images[num_train:], labels[num_train:]


def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
    return [(scale * rng.randn(n_in, n_out), scale * rng.randn(n_out))
            for n_in, n_out in zip(layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        activations = jnp.tanh(jnp.dot(activations, w) + b)
    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    return -jnp.mean(predict(params, inputs) * targets)


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


if __name__ == "__main__":
    layer_sizes = [784, 1024, 1024, 10]
    param_scale = 0.1
    step_size = 0.001
    num_epochs = 3
    batch_size = 128

    train_images, train_labels, test_images, test_labels = synthetic_mnist(512, 256)
    num_train = train_images.shape[0]
    num_complete_batches, leftover = divmod(num_train, batch_size)
    num_batches = num_complete_batches + bool(leftover)

    def data_stream():
        rng = npr.RandomState(0)
        while True:
            perm = rng.permutation(num_train)
            for i in range(num_batches):
                batch_idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[batch_idx], train_labels[batch_idx]

    batches = data_stream()

    @jit
    def update(params, batch):
        grads = grad(loss)(params, batch)
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    params = init_random_params(param_scale, layer_sizes)
    trajectory = []  # (loss on the batch, parameters after the step), every step
    for epoch in range(num_epochs):
        for _ in range(num_batches):
            batch = next(batches)
            batch_loss = loss(params, batch)
            params = update(params, batch)
            trajectory.append((batch_loss, params))
        train_acc = accuracy(params, (train_images, train_labels))
        test_acc = accuracy(params, (test_images, test_labels))
        print("Epoch {} last batch loss {:.15e}".format(epoch, float(batch_loss)))
        print("Training set accuracy {}".format(train_acc))
        print("Test set accuracy {}".format(test_acc))
