# A program of the kind of the JAX documentation's "Training a simple neural network, with
# PyTorch/TensorFlow data loading" notebook (docs/notebooks/Neural_Network_and_Data_Loading,
# jax-ml/jax, Apache-2.0): an MLP whose parameters come from jax.random, a per-example predict
# batched with vmap, jax.nn.one_hot targets, logsumexp, and an SGD update under jit, fed by a
# numpy data loader. Written for functrans's test suite; the data set is synthetic (MNIST's
# shapes, numpy-generated) and the run is 3 epochs of 4 batches.

import numpy as np

import jax
import jax.numpy as jnp
from jax import grad, jit, random, vmap
from jax.scipy.special import logsumexp

jax.config.update("jax_enable_x64", True)


def random_layer_params(m, n, key, scale=1e-2):
    w_key, b_key = random.split(key)
    return scale * random.normal(w_key, (n, m)), scale * random.normal(b_key, (n,))


def init_network_params(sizes, key):
    keys = random.split(key, len(sizes))
    return [random_layer_params(m, n, k) for m, n, k in zip(sizes[:-1], sizes[1:], keys)]


layer_sizes = [784, 512, 512, 10]
step_size = 0.01
num_epochs = 3
batch_size = 128
n_targets = 10
params = init_network_params(layer_sizes, random.key(0))


def relu(x):
    return jnp.maximum(0, x)


def predict(params, image):
    activations = image
    for w, b in params[:-1]:
        outputs = jnp.dot(w, activations) + b
        activations = relu(outputs)
    final_w, final_b = params[-1]
    logits = jnp.dot(final_w, activations) + final_b
    return logits - logsumexp(logits)


random_flattened_image = random.normal(random.key(1), (28 * 28,))
preds = predict(params, random_flattened_image)
print(preds.shape)

batched_predict = vmap(predict, in_axes=(None, 0))
random_flattened_images = random.normal(random.key(1), (10, 28 * 28))
batched_preds = batched_predict(params, random_flattened_images)
print(batched_preds.shape)


def one_hot(x, k, dtype=jnp.float64):
    return jnp.array(x[:, None] == jnp.arange(k), dtype)


def accuracy(params, images, targets):
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(batched_predict(params, images), axis=1)
    return jnp.mean(predicted_class == target_class)


def loss(params, images, targets):
    preds = batched_predict(params, images)
    return -jnp.mean(preds * targets)


@jit
def update(params, x, y):
    grads = grad(loss)(params, x, y)
    return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]


def synthetic_digits(n, rng, teacher):
    images = rng.uniform(size=(n, 28 * 28))
    labels = np.argmax((images - 0.5) @ teacher, axis=1)
    return images, labels


def numpy_loader(images, labels, batch_size, rng):
    order = rng.permutation(len(images))
    for start in range(0, len(images), batch_size):
        idx = order[start:start + batch_size]
        yield images[idx], labels[idx]


rng = np.random.default_rng(0)
teacher = rng.standard_normal((28 * 28, n_targets))
train_images, train_labels = synthetic_digits(512, rng, teacher)
test_images, test_labels = synthetic_digits(256, rng, teacher)
train_targets = one_hot(train_labels, n_targets)
test_targets = jax.nn.one_hot(test_labels, n_targets)

trajectory = []
for epoch in range(num_epochs):
    for x, y in numpy_loader(train_images, train_labels, batch_size, rng):
        y = one_hot(y, n_targets)
        params = update(params, x, y)
        trajectory.append((loss(params, x, y), params))
    train_acc = accuracy(params, train_images, train_targets)
    test_acc = accuracy(params, test_images, test_targets)
    print("Epoch {}: loss {:.12e}".format(epoch, float(trajectory[-1][0])))
    print("Training set accuracy {}".format(train_acc))
    print("Test set accuracy {}".format(test_acc))
