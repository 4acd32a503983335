"""Tensor repr: it must equal torch's repr after replacing "torch." by "jitensor.".

CASES holds torch 2.x's output for each input (recorded, so these run without torch); with torch
installed the same inputs, random ones and the print options are compared live."""
import importlib.util

import numpy as np
import pytest
from conftest import CPU_DTYPES, dtype_id
from hypothesis import given
from hypothesis import strategies as st

import jitensor as jt

# name: (NumPy/Python data expression, dtype name or None, requires_grad, torch's repr)
CASES = {
    'zeros_2x3': ('np.zeros((2, 3))', None, False,
        'tensor([[0., 0., 0.],\n        [0., 0., 0.]], dtype=jitensor.float64)'),
    'ints': ('[[1, 2, 3], [40, 500, -6]]', None, False,
        'tensor([[  1,   2,   3],\n        [ 40, 500,  -6]])'),
    'bools': ('[True, False, True]', None, False,
        'tensor([ True, False,  True])'),
    'floats_4dp': ('[1.5, 0.123456, -2.0, 3.14159]', None, False,
        'tensor([ 1.5000,  0.1235, -2.0000,  3.1416])'),
    'int_valued_floats': ('[1.0, -2.0, 30.0]', None, False,
        'tensor([ 1., -2., 30.])'),
    'sci_small': ('[1e-5, 1.0]', None, False,
        'tensor([1.0000e-05, 1.0000e+00])'),
    'sci_large': ('[1e10, 1.0]', None, False,
        'tensor([1.0000e+10, 1.0000e+00])'),
    'sci_ratio': ('[0.001, 2.5]', None, False,
        'tensor([1.0000e-03, 2.5000e+00])'),
    'nan_inf': ("[float('nan'), 1.0, float('inf'), -float('inf')]", None, False,
        'tensor([nan, 1., inf, -inf])'),
    'nan_inf_frac': ("[float('nan'), 1.5, float('inf')]", None, False,
        'tensor([   nan, 1.5000,    inf])'),
    'nan_inf_sci': ("[float('nan'), 1e-6, float('-inf')]", None, False,
        'tensor([       nan, 1.0000e-06,       -inf])'),
    'all_nan': ("[float('nan'), float('nan')]", None, False,
        'tensor([nan, nan])'),
    'empty_1d': ('[]', None, False,
        'tensor([])'),
    'empty_2d': ('np.zeros((0, 3))', None, False,
        'tensor([], size=(0, 3), dtype=jitensor.float64)'),
    'empty_int64': ('np.zeros(0)', 'int64', False,
        'tensor([], dtype=jitensor.int64)'),
    'empty_3d_int8': ('np.zeros((2, 0, 1))', 'int8', False,
        'tensor([], size=(2, 0, 1), dtype=jitensor.int8)'),
    'empty_bool': ('np.zeros(0)', 'bool', False,
        'tensor([], dtype=jitensor.bool)'),
    'empty_float64': ('np.zeros((3, 0))', 'float64', False,
        'tensor([], size=(3, 0), dtype=jitensor.float64)'),
    'empty_requires_grad': ('np.zeros((0, 2))', None, True,
        'tensor([], size=(0, 2), dtype=jitensor.float64, requires_grad=True)'),
    'zero_d_float': ('3.5', None, False,
        'tensor(3.5000)'),
    'zero_d_int': ('7', None, False,
        'tensor(7)'),
    'zero_d_bool': ('True', None, False,
        'tensor(True)'),
    'zero_d_int8': ('-3', 'int8', False,
        'tensor(-3, dtype=jitensor.int8)'),
    'zero_d_float64': ('0.1', 'float64', False,
        'tensor(0.1000, dtype=jitensor.float64)'),
    'zero_d_sci': ('1e-7', None, False,
        'tensor(1.0000e-07)'),
    'requires_grad': ('[1.0, 2.5]', None, True,
        'tensor([1.0000, 2.5000], requires_grad=True)'),
    'requires_grad_2d': ('[[1.0, 2.5], [3.0, 4.0]]', None, True,
        'tensor([[1.0000, 2.5000],\n        [3.0000, 4.0000]], requires_grad=True)'),
    'float64': ('[1.0, 2.5]', 'float64', False,
        'tensor([1.0000, 2.5000], dtype=jitensor.float64)'),
    'float64_requires_grad': ('[0.25, 2.5]', 'float64', True,
        'tensor([0.2500, 2.5000], dtype=jitensor.float64, requires_grad=True)'),
    'uint8': ('[0, 255, 7]', 'uint8', False,
        'tensor([  0, 255,   7], dtype=jitensor.uint8)'),
    'int16': ('[-300, 2]', 'int16', False,
        'tensor([-300,    2], dtype=jitensor.int16)'),
    'int32': ('[[1, -2], [3, 4]]', 'int32', False,
        'tensor([[ 1, -2],\n        [ 3,  4]], dtype=jitensor.int32)'),
    'neg_zero': ('[-0.0, 1.0]', None, False,
        'tensor([-0., 1.])'),
    'three_d': ('np.arange(24.).reshape(2, 3, 4) / 3', None, False,
        'tensor([[[0.0000, 0.3333, 0.6667, 1.0000],\n'
        '         [1.3333, 1.6667, 2.0000, 2.3333],\n'
        '         [2.6667, 3.0000, 3.3333, 3.6667]],\n'
        '\n'
        '        [[4.0000, 4.3333, 4.6667, 5.0000],\n'
        '         [5.3333, 5.6667, 6.0000, 6.3333],\n'
        '         [6.6667, 7.0000, 7.3333, 7.6667]]], dtype=jitensor.float64)'),
    'four_d_int': ('np.arange(16).reshape(2, 2, 2, 2)', 'int16', False,
        'tensor([[[[ 0,  1],\n'
        '          [ 2,  3]],\n'
        '\n'
        '         [[ 4,  5],\n'
        '          [ 6,  7]]],\n'
        '\n'
        '\n'
        '        [[[ 8,  9],\n'
        '          [10, 11]],\n'
        '\n'
        '         [[12, 13],\n'
        '          [14, 15]]]], dtype=jitensor.int16)'),
    'big_1d': ('np.arange(2000.)', None, False,
        'tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n'
        '        1.9990e+03], dtype=jitensor.float64)'),
    'big_2d': ('np.arange(2000.).reshape(40, 50) / 7', None, False,
        'tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 6.7143e+00, 6.8571e+00,\n'
        '         7.0000e+00],\n'
        '        [7.1429e+00, 7.2857e+00, 7.4286e+00,  ..., 1.3857e+01, 1.4000e+01,\n'
        '         1.4143e+01],\n'
        '        [1.4286e+01, 1.4429e+01, 1.4571e+01,  ..., 2.1000e+01, 2.1143e+01,\n'
        '         2.1286e+01],\n'
        '        ...,\n'
        '        [2.6429e+02, 2.6443e+02, 2.6457e+02,  ..., 2.7100e+02, 2.7114e+02,\n'
        '         2.7129e+02],\n'
        '        [2.7143e+02, 2.7157e+02, 2.7171e+02,  ..., 2.7814e+02, 2.7829e+02,\n'
        '         2.7843e+02],\n'
        '        [2.7857e+02, 2.7871e+02, 2.7886e+02,  ..., 2.8529e+02, 2.8543e+02,\n'
        '         2.8557e+02]], dtype=jitensor.float64)'),
    'big_3d_int': ('np.arange(3000).reshape(10, 10, 30)', 'int32', False,
        'tensor([[[   0,    1,    2,  ...,   27,   28,   29],\n'
        '         [  30,   31,   32,  ...,   57,   58,   59],\n'
        '         [  60,   61,   62,  ...,   87,   88,   89],\n'
        '         ...,\n'
        '         [ 210,  211,  212,  ...,  237,  238,  239],\n'
        '         [ 240,  241,  242,  ...,  267,  268,  269],\n'
        '         [ 270,  271,  272,  ...,  297,  298,  299]],\n'
        '\n'
        '        [[ 300,  301,  302,  ...,  327,  328,  329],\n'
        '         [ 330,  331,  332,  ...,  357,  358,  359],\n'
        '         [ 360,  361,  362,  ...,  387,  388,  389],\n'
        '         ...,\n'
        '         [ 510,  511,  512,  ...,  537,  538,  539],\n'
        '         [ 540,  541,  542,  ...,  567,  568,  569],\n'
        '         [ 570,  571,  572,  ...,  597,  598,  599]],\n'
        '\n'
        '        [[ 600,  601,  602,  ...,  627,  628,  629],\n'
        '         [ 630,  631,  632,  ...,  657,  658,  659],\n'
        '         [ 660,  661,  662,  ...,  687,  688,  689],\n'
        '         ...,\n'
        '         [ 810,  811,  812,  ...,  837,  838,  839],\n'
        '         [ 840,  841,  842,  ...,  867,  868,  869],\n'
        '         [ 870,  871,  872,  ...,  897,  898,  899]],\n'
        '\n'
        '        ...,\n'
        '\n'
        '        [[2100, 2101, 2102,  ..., 2127, 2128, 2129],\n'
        '         [2130, 2131, 2132,  ..., 2157, 2158, 2159],\n'
        '         [2160, 2161, 2162,  ..., 2187, 2188, 2189],\n'
        '         ...,\n'
        '         [2310, 2311, 2312,  ..., 2337, 2338, 2339],\n'
        '         [2340, 2341, 2342,  ..., 2367, 2368, 2369],\n'
        '         [2370, 2371, 2372,  ..., 2397, 2398, 2399]],\n'
        '\n'
        '        [[2400, 2401, 2402,  ..., 2427, 2428, 2429],\n'
        '         [2430, 2431, 2432,  ..., 2457, 2458, 2459],\n'
        '         [2460, 2461, 2462,  ..., 2487, 2488, 2489],\n'
        '         ...,\n'
        '         [2610, 2611, 2612,  ..., 2637, 2638, 2639],\n'
        '         [2640, 2641, 2642,  ..., 2667, 2668, 2669],\n'
        '         [2670, 2671, 2672,  ..., 2697, 2698, 2699]],\n'
        '\n'
        '        [[2700, 2701, 2702,  ..., 2727, 2728, 2729],\n'
        '         [2730, 2731, 2732,  ..., 2757, 2758, 2759],\n'
        '         [2760, 2761, 2762,  ..., 2787, 2788, 2789],\n'
        '         ...,\n'
        '         [2910, 2911, 2912,  ..., 2937, 2938, 2939],\n'
        '         [2940, 2941, 2942,  ..., 2967, 2968, 2969],\n'
        '         [2970, 2971, 2972,  ..., 2997, 2998, 2999]]], dtype=jitensor.int32)'),
    'big_bool': ('np.arange(1500) % 3 == 0', None, False,
        'tensor([ True, False, False,  ...,  True, False, False])'),
    'big_float64_sci': ('np.arange(1, 1201.).reshape(30, 40) ** 3', 'float64', False,
        'tensor([[1.0000e+00, 8.0000e+00, 2.7000e+01,  ..., 5.4872e+04, 5.9319e+04,\n'
        '         6.4000e+04],\n'
        '        [6.8921e+04, 7.4088e+04, 7.9507e+04,  ..., 4.7455e+05, 4.9304e+05,\n'
        '         5.1200e+05],\n'
        '        [5.3144e+05, 5.5137e+05, 5.7179e+05,  ..., 1.6430e+06, 1.6852e+06,\n'
        '         1.7280e+06],\n'
        '        ...,\n'
        '        [1.2632e+09, 1.2667e+09, 1.2702e+09,  ..., 1.3974e+09, 1.4012e+09,\n'
        '         1.4049e+09],\n'
        '        [1.4087e+09, 1.4125e+09, 1.4162e+09,  ..., 1.5528e+09, 1.5569e+09,\n'
        '         1.5609e+09],\n'
        '        [1.5649e+09, 1.5690e+09, 1.5730e+09,  ..., 1.7194e+09, 1.7237e+09,\n'
        '         1.7280e+09]], dtype=jitensor.float64)'),
    'long_line': ('np.arange(30.) * 1.25', None, False,
        'tensor([ 0.0000,  1.2500,  2.5000,  3.7500,  5.0000,  6.2500,  7.5000,  8.7500,\n'
        '        10.0000, 11.2500, 12.5000, 13.7500, 15.0000, 16.2500, 17.5000, 18.7500,\n'
        '        20.0000, 21.2500, 22.5000, 23.7500, 25.0000, 26.2500, 27.5000, 28.7500,\n'
        '        30.0000, 31.2500, 32.5000, 33.7500, 35.0000, 36.2500],\n'
        '       dtype=jitensor.float64)'),
    'wide_ints': ('np.arange(25) * 123456789', None, False,
        'tensor([         0,  123456789,  246913578,  370370367,  493827156,  617283945,\n'
        '         740740734,  864197523,  987654312, 1111111101, 1234567890, 1358024679,\n'
        '        1481481468, 1604938257, 1728395046, 1851851835, 1975308624, 2098765413,\n'
        '        2222222202, 2345678991, 2469135780, 2592592569, 2716049358, 2839506147,\n'
        '        2962962936])'),
    'mixed_sci': ('[[1e-8, 2.0], [3e8, -4.0]]', None, False,
        'tensor([[ 1.0000e-08,  2.0000e+00],\n        [ 3.0000e+08, -4.0000e+00]])'),
    'threshold_edge': ('np.arange(1000.)', None, False,
        'tensor([  0.,   1.,   2.,   3.,   4.,   5.,   6.,   7.,   8.,   9.,  10.,  11.,\n'
        '         12.,  13.,  14.,  15.,  16.,  17.,  18.,  19.,  20.,  21.,  22.,  23.,\n'
        '         24.,  25.,  26.,  27.,  28.,  29.,  30.,  31.,  32.,  33.,  34.,  35.,\n'
        '         36.,  37.,  38.,  39.,  40.,  41.,  42.,  43.,  44.,  45.,  46.,  47.,\n'
        '         48.,  49.,  50.,  51.,  52.,  53.,  54.,  55.,  56.,  57.,  58.,  59.,\n'
        '         60.,  61.,  62.,  63.,  64.,  65.,  66.,  67.,  68.,  69.,  70.,  71.,\n'
        '         72.,  73.,  74.,  75.,  76.,  77.,  78.,  79.,  80.,  81.,  82.,  83.,\n'
        '         84.,  85.,  86.,  87.,  88.,  89.,  90.,  91.,  92.,  93.,  94.,  95.,\n'
        '         96.,  97.,  98.,  99., 100., 101., 102., 103., 104., 105., 106., 107.,\n'
        '        108., 109., 110., 111., 112., 113., 114., 115., 116., 117., 118., 119.,\n'
        '        120., 121., 122., 123., 124., 125., 126., 127., 128., 129., 130., 131.,\n'
        '        132., 133., 134., 135., 136., 137., 138., 139., 140., 141., 142., 143.,\n'
        '        144., 145., 146., 147., 148., 149., 150., 151., 152., 153., 154., 155.,\n'
        '        156., 157., 158., 159., 160., 161., 162., 163., 164., 165., 166., 167.,\n'
        '        168., 169., 170., 171., 172., 173., 174., 175., 176., 177., 178., 179.,\n'
        '        180., 181., 182., 183., 184., 185., 186., 187., 188., 189., 190., 191.,\n'
        '        192., 193., 194., 195., 196., 197., 198., 199., 200., 201., 202., 203.,\n'
        '        204., 205., 206., 207., 208., 209., 210., 211., 212., 213., 214., 215.,\n'
        '        216., 217., 218., 219., 220., 221., 222., 223., 224., 225., 226., 227.,\n'
        '        228., 229., 230., 231., 232., 233., 234., 235., 236., 237., 238., 239.,\n'
        '        240., 241., 242., 243., 244., 245., 246., 247., 248., 249., 250., 251.,\n'
        '        252., 253., 254., 255., 256., 257., 258., 259., 260., 261., 262., 263.,\n'
        '        264., 265., 266., 267., 268., 269., 270., 271., 272., 273., 274., 275.,\n'
        '        276., 277., 278., 279., 280., 281., 282., 283., 284., 285., 286., 287.,\n'
        '        288., 289., 290., 291., 292., 293., 294., 295., 296., 297., 298., 299.,\n'
        '        300., 301., 302., 303., 304., 305., 306., 307., 308., 309., 310., 311.,\n'
        '        312., 313., 314., 315., 316., 317., 318., 319., 320., 321., 322., 323.,\n'
        '        324., 325., 326., 327., 328., 329., 330., 331., 332., 333., 334., 335.,\n'
        '        336., 337., 338., 339., 340., 341., 342., 343., 344., 345., 346., 347.,\n'
        '        348., 349., 350., 351., 352., 353., 354., 355., 356., 357., 358., 359.,\n'
        '        360., 361., 362., 363., 364., 365., 366., 367., 368., 369., 370., 371.,\n'
        '        372., 373., 374., 375., 376., 377., 378., 379., 380., 381., 382., 383.,\n'
        '        384., 385., 386., 387., 388., 389., 390., 391., 392., 393., 394., 395.,\n'
        '        396., 397., 398., 399., 400., 401., 402., 403., 404., 405., 406., 407.,\n'
        '        408., 409., 410., 411., 412., 413., 414., 415., 416., 417., 418., 419.,\n'
        '        420., 421., 422., 423., 424., 425., 426., 427., 428., 429., 430., 431.,\n'
        '        432., 433., 434., 435., 436., 437., 438., 439., 440., 441., 442., 443.,\n'
        '        444., 445., 446., 447., 448., 449., 450., 451., 452., 453., 454., 455.,\n'
        '        456., 457., 458., 459., 460., 461., 462., 463., 464., 465., 466., 467.,\n'
        '        468., 469., 470., 471., 472., 473., 474., 475., 476., 477., 478., 479.,\n'
        '        480., 481., 482., 483., 484., 485., 486., 487., 488., 489., 490., 491.,\n'
        '        492., 493., 494., 495., 496., 497., 498., 499., 500., 501., 502., 503.,\n'
        '        504., 505., 506., 507., 508., 509., 510., 511., 512., 513., 514., 515.,\n'
        '        516., 517., 518., 519., 520., 521., 522., 523., 524., 525., 526., 527.,\n'
        '        528., 529., 530., 531., 532., 533., 534., 535., 536., 537., 538., 539.,\n'
        '        540., 541., 542., 543., 544., 545., 546., 547., 548., 549., 550., 551.,\n'
        '        552., 553., 554., 555., 556., 557., 558., 559., 560., 561., 562., 563.,\n'
        '        564., 565., 566., 567., 568., 569., 570., 571., 572., 573., 574., 575.,\n'
        '        576., 577., 578., 579., 580., 581., 582., 583., 584., 585., 586., 587.,\n'
        '        588., 589., 590., 591., 592., 593., 594., 595., 596., 597., 598., 599.,\n'
        '        600., 601., 602., 603., 604., 605., 606., 607., 608., 609., 610., 611.,\n'
        '        612., 613., 614., 615., 616., 617., 618., 619., 620., 621., 622., 623.,\n'
        '        624., 625., 626., 627., 628., 629., 630., 631., 632., 633., 634., 635.,\n'
        '        636., 637., 638., 639., 640., 641., 642., 643., 644., 645., 646., 647.,\n'
        '        648., 649., 650., 651., 652., 653., 654., 655., 656., 657., 658., 659.,\n'
        '        660., 661., 662., 663., 664., 665., 666., 667., 668., 669., 670., 671.,\n'
        '        672., 673., 674., 675., 676., 677., 678., 679., 680., 681., 682., 683.,\n'
        '        684., 685., 686., 687., 688., 689., 690., 691., 692., 693., 694., 695.,\n'
        '        696., 697., 698., 699., 700., 701., 702., 703., 704., 705., 706., 707.,\n'
        '        708., 709., 710., 711., 712., 713., 714., 715., 716., 717., 718., 719.,\n'
        '        720., 721., 722., 723., 724., 725., 726., 727., 728., 729., 730., 731.,\n'
        '        732., 733., 734., 735., 736., 737., 738., 739., 740., 741., 742., 743.,\n'
        '        744., 745., 746., 747., 748., 749., 750., 751., 752., 753., 754., 755.,\n'
        '        756., 757., 758., 759., 760., 761., 762., 763., 764., 765., 766., 767.,\n'
        '        768., 769., 770., 771., 772., 773., 774., 775., 776., 777., 778., 779.,\n'
        '        780., 781., 782., 783., 784., 785., 786., 787., 788., 789., 790., 791.,\n'
        '        792., 793., 794., 795., 796., 797., 798., 799., 800., 801., 802., 803.,\n'
        '        804., 805., 806., 807., 808., 809., 810., 811., 812., 813., 814., 815.,\n'
        '        816., 817., 818., 819., 820., 821., 822., 823., 824., 825., 826., 827.,\n'
        '        828., 829., 830., 831., 832., 833., 834., 835., 836., 837., 838., 839.,\n'
        '        840., 841., 842., 843., 844., 845., 846., 847., 848., 849., 850., 851.,\n'
        '        852., 853., 854., 855., 856., 857., 858., 859., 860., 861., 862., 863.,\n'
        '        864., 865., 866., 867., 868., 869., 870., 871., 872., 873., 874., 875.,\n'
        '        876., 877., 878., 879., 880., 881., 882., 883., 884., 885., 886., 887.,\n'
        '        888., 889., 890., 891., 892., 893., 894., 895., 896., 897., 898., 899.,\n'
        '        900., 901., 902., 903., 904., 905., 906., 907., 908., 909., 910., 911.,\n'
        '        912., 913., 914., 915., 916., 917., 918., 919., 920., 921., 922., 923.,\n'
        '        924., 925., 926., 927., 928., 929., 930., 931., 932., 933., 934., 935.,\n'
        '        936., 937., 938., 939., 940., 941., 942., 943., 944., 945., 946., 947.,\n'
        '        948., 949., 950., 951., 952., 953., 954., 955., 956., 957., 958., 959.,\n'
        '        960., 961., 962., 963., 964., 965., 966., 967., 968., 969., 970., 971.,\n'
        '        972., 973., 974., 975., 976., 977., 978., 979., 980., 981., 982., 983.,\n'
        '        984., 985., 986., 987., 988., 989., 990., 991., 992., 993., 994., 995.,\n'
        '        996., 997., 998., 999.], dtype=jitensor.float64)'),
    'threshold_over': ('np.arange(1001)', None, False,
        'tensor([   0,    1,    2,  ...,  998,  999, 1000])'),
    'column': ('np.arange(5.).reshape(5, 1) / 8', None, False,
        'tensor([[0.0000],\n'
        '        [0.1250],\n'
        '        [0.2500],\n'
        '        [0.3750],\n'
        '        [0.5000]], dtype=jitensor.float64)'),
}

# torch wraps a suffix onto its own line when the last line, "tensor(" included, plus ", " and the
# suffix would pass the line width. jitensor measures with torch's names ("torch.float64"), so it
# wraps exactly where torch does although its "jitensor." names are 3 characters longer.
WRAP_CASES = {  # inputs at the wrapping boundary
    "float64_rg_4": ("[0.0, 1 / 3, 2 / 3, 1.0]", "float64", True,
                     "tensor([0.0000, 0.3333, 0.6667, 1.0000], dtype=jitensor.float64,\n"
                     "       requires_grad=True)"),
    "int8_9": ("[0, 37, 74, 111, -108, -71, -34, 3, 40]", "int8", False,
               "tensor([   0,   37,   74,  111, -108,  -71,  -34,    3,   40],\n"
               "       dtype=jitensor.int8)"),
    "float64_20": (
        "np.arange(20.) * 37", "float64", False,
        "tensor([  0.,  37.,  74., 111., 148., 185., 222., 259., 296., 333., 370., 407.,\n"
        "        444., 481., 518., 555., 592., 629., 666., 703.], dtype=jitensor.float64)"),
}


def build(expr, dtype, requires_grad):
    return jt.tensor(eval(expr), dtype=dtype, requires_grad=requires_grad)


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_recorded_torch_output(name):
    expr, dtype, requires_grad, expected = CASES[name]
    t = build(expr, dtype, requires_grad)
    assert repr(t) == expected
    assert str(t) == expected


WRAP_NAMES = list(WRAP_CASES)


@pytest.mark.parametrize("name", WRAP_NAMES)
def test_repr_suffix_wrapping_matches_torch(name):
    expr, dtype, requires_grad, expected = WRAP_CASES[name]
    assert repr(build(expr, dtype, requires_grad)) == expected


def test_repr_of_views_and_independence_from_layout():
    base = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    view = jt.from_numpy(base.T)
    assert repr(view) == repr(jt.tensor(np.ascontiguousarray(base.T)))
    assert repr(jt.from_numpy(base[:, ::2])) == ("tensor([[0.0000, 0.5000],\n"
                                                 "        [1.0000, 1.5000],\n"
                                                 "        [2.0000, 2.5000]])")


def test_repr_with_default_dtype_float64():
    jt.set_default_dtype(jt.float64)
    assert repr(jt.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
    assert (repr(jt.tensor([1.5, 2.0], dtype=jt.float32))
            == "tensor([1.5000, 2.0000], dtype=jitensor.float32)")
    assert repr(jt.zeros(0)) == "tensor([])"
    assert repr(jt.zeros(0, dtype=jt.float32)) == "tensor([], dtype=jitensor.float32)"


def test_set_printoptions():
    t = jt.tensor([1.123456, 2.5])
    jt.set_printoptions(precision=2)
    assert repr(t) == "tensor([1.12, 2.50])"
    jt.set_printoptions(sci_mode=True)
    assert repr(t) == "tensor([1.12e+00, 2.50e+00])"
    jt.set_printoptions(profile="default")
    assert repr(t) == "tensor([1.1235, 2.5000])"
    jt.set_printoptions(threshold=3, edgeitems=1)
    assert repr(jt.tensor([1, 2, 3, 4])) == "tensor([1,  ..., 4])"
    jt.set_printoptions(profile="default")
    with pytest.raises(ValueError):
        jt.set_printoptions(profile="nope")


# -- live comparison with torch -------------------------------------------------------------------
def torch_repr(torch, data, dtype, requires_grad=False):
    t = torch.tensor(data, dtype=None if dtype is None else getattr(torch, dtype),
                     requires_grad=requires_grad)
    return repr(t).replace("torch.", "jitensor.")


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_live_torch(name):
    torch = pytest.importorskip("torch")
    expr, dtype, requires_grad, _ = CASES[name]
    assert repr(build(expr, dtype, requires_grad)) == torch_repr(torch, eval(expr), dtype,
                                                                 requires_grad)


@pytest.mark.parametrize("name", WRAP_NAMES)
def test_repr_suffix_wrapping_matches_live_torch(name):
    torch = pytest.importorskip("torch")
    expr, dtype, requires_grad, _ = WRAP_CASES[name]
    assert repr(build(expr, dtype, requires_grad)) == torch_repr(torch, eval(expr), dtype,
                                                                 requires_grad)


@st.composite
def repr_inputs(draw):
    shape = tuple(draw(st.lists(st.integers(0, 6), max_size=4)))
    dtype = draw(st.sampled_from(CPU_DTYPES))
    n = int(np.prod(shape))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    if dtype is jt.bool:
        data = rng.integers(0, 2, n).astype(bool)
    elif dtype.is_floating_point:
        scale = 10.0 ** draw(st.integers(-9, 12))
        data = rng.standard_normal(n) * scale
        if draw(st.booleans()):
            data = np.round(data)
        if n and draw(st.booleans()):
            data[rng.integers(0, n)] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    else:
        info = np.iinfo(dtype.np)
        hi = draw(st.sampled_from([10, 1000, int(info.max)]))
        data = rng.integers(max(int(info.min), -hi), min(int(info.max), hi), n, endpoint=True)
    big = draw(st.integers(0, 9)) == 0  # sometimes over the summarising threshold
    if big:
        shape = draw(st.sampled_from([(1001,), (40, 30), (3, 20, 20), (2, 2, 300)]))
        data = np.resize(data if n else np.ones(1), shape)
    return (data.reshape(shape).astype(dtype.np), dtype,
            draw(st.booleans()) and dtype.is_floating_point)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@given(repr_inputs())
def test_repr_property_matches_torch(case):
    torch = pytest.importorskip("torch")
    data, dtype, requires_grad = case
    got = repr(jt.tensor(data, dtype=dtype, requires_grad=requires_grad))
    expected = torch_repr(torch, data, dtype.name, requires_grad)
    assert got == expected


@pytest.mark.parametrize("sci_mode, data, expected", [
    (False, [1e-6, 1.0, 123.456], "tensor([  0.0000,   1.0000, 123.4560])"),
    (False, [1e10, 1.0], "tensor([10000000000.,           1.])"),
    (True, [-1.5, 2.5], "tensor([-1.5000e+00,  2.5000e+00])"),
    (True, [-1.0, 20.0], "tensor([-1.0000e+00,  2.0000e+01])"),
], ids=str)
def test_forced_sci_mode_width(sci_mode, data, expected):
    jt.set_printoptions(sci_mode=sci_mode)
    assert repr(jt.tensor(data)) == expected


@pytest.mark.parametrize("opts", [
    dict(precision=2), dict(precision=6), dict(sci_mode=True), dict(sci_mode=False),
    dict(threshold=5), dict(threshold=5, edgeitems=1), dict(linewidth=40), dict(profile="short"),
    dict(profile="full"),
], ids=str)
def test_printoptions_match_torch(opts):
    torch = pytest.importorskip("torch")
    datas = [np.arange(12.).reshape(3, 4) / 7, np.array([1e-6, 1.0, 1234.5]), np.arange(30),
             np.array([1e12, -3.0]), np.arange(2000.), np.array([0.5, 2.25])]
    try:
        jt.set_printoptions(**opts)
        torch.set_printoptions(**opts)
        for data in datas:
            got = repr(jt.tensor(data))
            assert got == torch_repr(torch, data, None)
    finally:
        jt.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


@pytest.mark.parametrize("d", CPU_DTYPES, ids=dtype_id)
def test_repr_default_dtype_float64_matches_torch(d):
    torch = pytest.importorskip("torch")
    jt.set_default_dtype(jt.float64)
    torch.set_default_dtype(torch.float64)
    for data in ([1.5, 2.0] if d.is_floating_point else [1, 0], np.zeros((0, 2))):
        got = repr(jt.tensor(data, dtype=d))
        assert got == torch_repr(torch, data, d.name)
