# install rules: see issue 2 item 1
