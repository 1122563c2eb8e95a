// Everything a kiln user includes.
#pragma once

#include "kiln/builder.h"
#include "kiln/layers.h"
#include "kiln/logger.h"
#include "kiln/network.h"
#include "kiln/plugin.h"
#include "kiln/registry.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "kiln/types.h"
